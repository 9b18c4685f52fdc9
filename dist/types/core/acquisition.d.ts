import { type AcquirePolicy, type BusyInfo } from './acquire';
import type { Lease, LeaseStore } from './lease-store';
import { type LivenessOptions, type RunLiveness } from './liveness';
import { type SkipRecord } from './operations';
/**
 * One acquisition as the adapters (action main, `leasefence run`) need it: liveness-aware takeover of a
 * holder whose run is over, the on-busy policy (with FIFO queue or N slots), then skip counting and
 * stuck-lock detection. Adapters only render the outcome.
 */
export interface AcquisitionRequest extends AcquirePolicy {
    resource: string;
    owner: string;
    /** N-slot leasing when > 1 (each slot its own lease document). */
    slots?: number;
    /** Ask the GitHub API whether the holder's run is over (takeover only on a definite "completed"). */
    liveness?: LivenessOptions;
    /** Warn (lock_stuck) when this many skips pile up on one holder. Default 10. */
    stuckThreshold?: number;
    /** Warn (lock_stuck) when one holder has held the lease longer than this. */
    maxHoldMs?: number;
    /** Who is skipping (recorded on the lease). */
    skipper?: string;
}
export interface Takeover {
    from: string;
    token: number;
    why: 'run-completed';
    detail: string;
}
export interface Stuck {
    holder: string;
    token: number;
    skipCount: number;
    heldMs: number;
    why: string;
}
export type AcquisitionOutcome = {
    acquired: true;
    lease: Lease;
    slot?: number;
    waitedMs: number;
    takeover?: Takeover;
    liveness?: RunLiveness;
} | {
    acquired: false;
    busy: BusyInfo;
    waitedMs: number;
    supersededBy?: string;
    skip?: SkipRecord;
    stuck?: Stuck;
    liveness?: RunLiveness;
};
export declare function acquireLease(store: LeaseStore, req: AcquisitionRequest): Promise<AcquisitionOutcome>;
