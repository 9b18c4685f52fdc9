import type { AcquireOptions, AcquireResult, Lease, LeaseStore } from './lease-store';
import type { OnBusy, QueueMode } from './options';
import { type Clock } from './time';
export type BusyInfo = Extract<AcquireResult, {
    acquired: false;
}>;
export interface AcquirePolicy extends AcquireOptions {
    onBusy: OnBusy;
    /** wait / supersede: FIFO tickets (default) or a free-for-all. */
    queue?: QueueMode;
    /** For on-busy wait: give up after this long (monotonic). */
    waitTimeoutMs?: number;
    /** Fallback poll period while waiting (jittered); listeners wake waiters sooner. */
    pollMs?: number;
    clock?: Clock;
    signal?: AbortSignal;
    /** Called while waiting, at most every `progressEveryMs` (default 10s). */
    onWaiting?(busy: BusyInfo, waitedMs: number, position: number | undefined): void;
    progressEveryMs?: number;
}
export type PolicyResult = {
    acquired: true;
    lease: Lease;
    waitedMs: number;
} | {
    acquired: false;
    busy: BusyInfo;
    waitedMs: number;
    supersededBy?: string;
};
export declare function describeBusy(b: BusyInfo): string;
/**
 * Acquire with an on-busy policy: `skip` returns the holder, `fail` throws LeaseBusyError, `wait` and
 * `supersede` wait until acquired or the timeout (WaitTimeoutError). Waiting writes nothing but the
 * waiter's queue ticket: it reads, and sleeps until the lease or the queue changes (listeners), the
 * holder's expiry, or a jittered poll period, whichever comes first. With the FIFO queue only the oldest
 * live ticket tries to acquire; `supersede` first cancels the older waiting tickets, whose waiters return
 * `supersededBy`.
 */
export declare function acquireWithPolicy(store: LeaseStore, resource: string, owner: string, policy: AcquirePolicy): Promise<PolicyResult>;
