import type { DocumentReference, DocumentSnapshot, Firestore } from '@google-cloud/firestore';
import { type Clock } from './time';
/**
 * The optimistic compare-and-set loop every lease write uses: read the document (its readTime is the
 * server's clock), decide, and write with a precondition on the updateTime that was read. A conflict
 * (someone wrote in between) re-reads at once; any other error may be an ambiguous commit, so it backs
 * off and re-reads too: the step then sees what really happened (for acquire, its own nonce).
 */
export interface CasAttempt {
    attempt: number;
    /** Monotonic time the read was sent: the start of a holder's deadline. */
    sentAt: number;
    snap: DocumentSnapshot;
}
export interface CasOptions {
    what: string;
    clock?: Clock;
    maxAttempts?: number;
}
/** A lost race: someone else wrote the document between our read and our write. */
export declare function isConflict(err: unknown): boolean;
export declare function compareAndSet<T>(ref: DocumentReference, opts: CasOptions, step: (a: CasAttempt) => Promise<T>): Promise<T>;
/**
 * The same loop over several documents read at one server time (`getAll`): the step writes a batch with
 * a precondition on each, so the check and the writes are atomic across documents without a lock.
 */
export declare function compareAndSetAll<T>(db: Firestore, refs: DocumentReference[], opts: CasOptions, step: (a: {
    attempt: number;
    sentAt: number;
    snaps: DocumentSnapshot[];
}) => Promise<T>): Promise<T>;
export declare function messageOf(err: unknown): string;
