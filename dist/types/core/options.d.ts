import { validateResource } from './resource-id';
export declare const ON_BUSY_MODES: readonly ["skip", "wait", "fail", "supersede"];
export type OnBusy = (typeof ON_BUSY_MODES)[number];
export declare const MIN_TTL_MS = 1000;
export declare const MIN_HEARTBEAT_MS = 250;
export declare const DEFAULT_TTL = "90s";
export declare const DEFAULT_WAIT_TIMEOUT = "15m";
export interface LeaseTimings {
    ttlMs: number;
    heartbeatMs: number;
}
/**
 * The timing rules, validated in one place (as client-go's leaderelection does):
 * ttl >= 1s; 250ms <= heartbeat <= ttl/3, so that two renewals can fail before the lease is lost.
 * `heartbeat` defaults to ttl/3.
 */
export declare function parseTimings(ttl: string | number | undefined, heartbeat?: string | number | undefined): LeaseTimings;
export declare function parseOnBusy(value: string | undefined, fallback?: OnBusy): OnBusy;
export declare const QUEUE_MODES: readonly ["fifo", "none"];
export type QueueMode = (typeof QUEUE_MODES)[number];
export declare function parseQueueMode(value: string | undefined): QueueMode;
export declare function validateOwner(owner: string): void;
export declare function validateToken(token: unknown): number;
export { validateResource };
