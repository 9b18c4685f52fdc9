import type { Lease, LeaseStore } from './lease-store';
import { type Clock } from './time';
export interface HeartbeatEvents {
    onRenew?(r: {
        expiresAt: Date;
        deadline: number;
        count: number;
    }): void;
    onError?(err: unknown, failures: number): void;
    /** Called once, the moment the lease is declared lost. Renewal stops for good. */
    onLost?(reason: string): void;
}
export interface HeartbeatOptions extends HeartbeatEvents {
    intervalMs: number;
    clock?: Clock;
}
export interface HeartbeatStats {
    renewals: number;
    failures: number;
    lost: boolean;
    lostReason?: string;
}
type Renewer = Pick<LeaseStore, 'renew'>;
/**
 * Keeps a lease alive: renews every `intervalMs` and declares the lease lost at once when a renewal is
 * refused, or when no renewal has been confirmed by the lease's deadline (ttl on the monotonic clock from
 * the send of the last confirmed renewal). Once lost, `signal` is aborted and it never renews again.
 */
export declare class Heartbeat {
    private readonly store;
    private readonly lease;
    private readonly opts;
    private readonly controller;
    private readonly clock;
    private deadline;
    private tickTimer?;
    private deadlineTimer?;
    private inFlight?;
    private stopped;
    readonly stats: HeartbeatStats;
    constructor(store: Renewer, lease: Pick<Lease, 'resource' | 'owner' | 'token' | 'ttlMs' | 'deadline'>, opts: HeartbeatOptions);
    /** Aborted when the lease is lost; pass it to whatever must stop then. */
    get signal(): AbortSignal;
    get lost(): boolean;
    start(): this;
    /**
     * The interval, but never more than a third of the time left: a lease whose acquisition was slow (so
     * less than a full ttl is left) still gets its renewals in before the deadline.
     */
    private nextDelay;
    /**
     * Stops renewing (without declaring loss) and waits for a renewal in flight, at most `waitMs`: a
     * renewal hung on the network must not keep a stopping process alive (its result is ignored anyway).
     */
    stop(waitMs?: number): Promise<void>;
    private schedule;
    private armDeadline;
    private beat;
    private declareLost;
}
export {};
