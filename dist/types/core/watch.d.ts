import type { DocumentReference, Query } from '@google-cloud/firestore';
/**
 * How waiters hear about changes: a Firestore listener that calls `onChange` on every change after the
 * initial snapshot, and a one-shot alarm a waiting loop naps on. Listener errors only cost speed: the
 * waiter's fallback poll still runs.
 */
export declare function onChange(target: DocumentReference | Query, callback: () => void): () => void;
/** A one-shot alarm: `ring` wakes the current (or the next) `wait`. */
export declare class Waker {
    private pending;
    private wakeNow?;
    ring(): void;
    wait(ms: number, signal?: AbortSignal): Promise<void>;
}
