import { Timestamp, type DocumentReference, type Firestore, type Transaction } from '@google-cloud/firestore';
import { type ConnectionSettings } from './connection';
import { type Clock } from './time';
/** The lease document, `leases/{id}`. */
export interface LeaseDoc {
    resource: string;
    owner: string;
    fencing: number;
    expiresAt: Timestamp;
    acquiredAt: Timestamp;
    renewedAt: Timestamp;
    nonce: string;
    holder: Record<string, string>;
    ttlMs: number;
    releasedAt?: Timestamp | null;
    releasedBy?: string | null;
    /** Skips recorded against this holder since its acquisition (reset on every acquisition). */
    skipCount?: number;
    lastSkippedBy?: string | null;
    lastSkippedAt?: Timestamp | null;
    /** The last token that passed the gate, and when (written by passGate). */
    lastGateToken?: number;
    lastGatePassAt?: Timestamp;
}
/** The gate document, `publish_gate/{id}`. */
export interface GateDoc {
    resource: string;
    fencing: number;
    owner: string;
    passedAt: Timestamp;
    passes?: number;
}
/** A lease this process holds. */
export interface Lease {
    resource: string;
    docId: string;
    owner: string;
    token: number;
    ttlMs: number;
    acquiredAt: Date;
    expiresAt: Date;
    /** Monotonic ms after which the holder must consider the lease lost (see time.ts). */
    deadline: number;
    /** Who held it before, when this acquisition took it from another owner. */
    previousOwner?: string;
    /** True when the previous owner's lease had expired without a release (it crashed or was paused). */
    previousExpired: boolean;
}
export type AcquireResult = {
    acquired: true;
    lease: Lease;
} | {
    acquired: false;
    resource: string;
    holder: string;
    holderMeta: Record<string, string>;
    token: number;
    expiresAt: Date;
    serverTime: Date;
    acquiredAt: Date;
    skipCount: number;
};
export type RenewResult = {
    renewed: true;
    expiresAt: Date;
    deadline: number;
} | {
    renewed: false;
    reason: string;
};
export type ReleaseResult = {
    released: true;
    token: number;
    wasExpired: boolean;
} | {
    released: false;
    reason: string;
};
export interface LeaseStatus {
    resource: string;
    docId: string;
    exists: boolean;
    owner?: string;
    token: number;
    expiresAt?: Date;
    live: boolean;
    remainingMs: number;
    holder: Record<string, string>;
    serverTime: Date;
}
export interface StoreFaults {
    /**
     * Test seam for the ambiguous commit: called right after a write has been committed, before its
     * result is used. Throwing here makes the store see what a dropped reply looks like.
     */
    afterCommit?(op: 'acquire' | 'renew' | 'release'): void | Promise<void>;
}
export interface LeaseStoreOptions extends ConnectionSettings {
    firestore?: Firestore;
    clock?: Clock;
    /** Compare-and-set attempts before giving up with StoreUnavailableError (default 8). */
    maxAttempts?: number;
    faults?: StoreFaults;
}
export interface AcquireOptions {
    ttlMs: number;
    /** Free-form metadata shown to others (run URL, host, ...). */
    holder?: Record<string, string>;
    /**
     * Take the lease from this exact holder even though it has not expired: its run is known to be over
     * (liveness-aware takeover). Applies only while the document still shows this owner and token.
     */
    staleHolder?: {
        owner: string;
        token: number;
        reason: string;
    };
}
/**
 * The Firestore lease store.
 *
 * Acquire, renew and release are optimistic compare-and-set operations: a plain read (whose readTime is
 * the server's clock) followed by a write conditioned on the document's updateTime (or `create` for a new
 * document). That is as atomic as a transaction, and unlike a transaction it takes no lock: a caller that
 * finds the lease busy only reads and never delays the holder's renewals. Under contention it measured
 * ~50x faster than transactions on the emulator (see BENCHMARKS.md / shared notes).
 *
 * The gate is a real transaction over the gate and the lease documents, because fenced writes of
 * callers' own documents must join it.
 */
export declare class LeaseStore {
    readonly db: Firestore;
    readonly collection: string;
    readonly gateCollection: string;
    private readonly clock;
    private readonly maxAttempts;
    private readonly faults;
    private readonly ownsClient;
    constructor(opts?: LeaseStoreOptions);
    leaseRef(resource: string): DocumentReference;
    gateRef(resource: string): DocumentReference;
    auditRef(resource: string): DocumentReference;
    close(): Promise<void>;
    /**
     * Takes the lease when it is free, expired, or already held by `owner`; the fencing token becomes the
     * previous one + 1. When another owner holds it unexpired, returns who and until when, having written
     * nothing. A write whose reply was lost is recognised by this call's nonce and yields the same token.
     */
    acquire(resource: string, owner: string, opts: AcquireOptions): Promise<AcquireResult>;
    /**
     * Extends the lease by its ttl from the server's now, only while the document still shows this owner
     * and token unexpired. Never changes the token.
     */
    renew(resource: string, owner: string, token: number, ttlMs: number): Promise<RenewResult>;
    /**
     * Expires the lease now, only if owner and token still match. Keeps the fencing counter (the document
     * is never deleted). Releasing a lease held by someone else changes nothing and says why.
     */
    release(resource: string, owner: string, token: number): Promise<ReleaseResult>;
    /** Reads the lease as the server sees it now. */
    status(resource: string): Promise<LeaseStatus>;
    /**
     * The fencing gate: one atomic step over the gate and the lease documents. Refuses a token lower than
     * the highest that ever passed (StaleFencingError) and a holder whose lease no longer shows this owner
     * and token unexpired (LeaseLostError); otherwise records the token and lets the caller go on.
     * Equal tokens pass: a holder may publish more than once.
     *
     * Both documents are read at one server time and the gate record is written in a batch conditioned on
     * both documents' updateTime (the lease gets `lastGateToken`/`lastGatePassAt`): atomic like a
     * transaction, but lock-free. A transaction here held a lock on the lease document: a publisher killed
     * inside it, or one whose reply was lost, froze every renewal, acquisition and release of the resource
     * for ~60 s (the chaos suite found it; scripts/chaos/gate-lock-repro.ts shows it).
     */
    passGate(resource: string, owner: string, token: number): Promise<GatePass>;
    /**
     * A truly fenced write for side effects that live in Firestore: `fn` runs inside a transaction over
     * the gate and the lease documents, after the same checks as passGate, and its writes commit
     * atomically with the gate record (or not at all). `fn` may be called more than once (Firestore
     * retries contended transactions): keep it free of side effects outside the transaction. The
     * transaction locks the lease document while it runs, delaying renewals: keep `fn` short.
     */
    fencedTransaction<T>(resource: string, owner: string, token: number, fn: (tx: Transaction) => Promise<T>): Promise<{
        pass: GatePass;
        result: T;
    }>;
    /** The gate's record: the highest token that passed. */
    gateStatus(resource: string): Promise<GateDoc | undefined>;
    private casOptions;
    private toLease;
}
export interface GatePass {
    resource: string;
    token: number;
    owner: string;
    passedAt: Date;
    /** The highest token that had passed before this one (0 for the first). */
    previousToken: number;
}
/** Why the document does not show `owner` holding `token` unexpired at the server's `now`, or undefined. */
export declare function whyNotHeld(cur: LeaseDoc | undefined, owner: string, token: number, now: Timestamp): string | undefined;
