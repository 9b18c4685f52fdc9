import { Timestamp } from '@google-cloud/firestore';
import type { LeaseStore } from './lease-store';
/**
 * What operators of locks need beyond acquire/renew/release: forced release with an audit trail, skip
 * counting for stuck-lock detection, listing leases, and reading the audit trail. Writes are the same
 * compare-and-set as the lease store's (read, then write conditioned on updateTime).
 */
export interface AuditRecord {
    action: string;
    owner?: string | null;
    fencing?: number;
    previousOwner?: string | null;
    previousFencing?: number;
    reason?: string | null;
    actor?: string | null;
    at: Date;
    [key: string]: unknown;
}
export interface ForceReleaseResult {
    released: boolean;
    previousOwner?: string;
    token: number;
    wasLive: boolean;
    reason: string;
}
/**
 * Expires the lease now whoever holds it, keeps the fencing counter, and appends an audit record with
 * the reason and the actor. The old holder's heartbeat then finds its lease lost, and its gate refuses.
 */
export declare function forceRelease(store: LeaseStore, resource: string, opts: {
    reason: string;
    actor: string;
}): Promise<ForceReleaseResult>;
export interface SkipRecord {
    skipCount: number;
    holder: string;
    token: number;
    /** How long the current holder has held it, by the server's clock. */
    heldMs: number;
}
/**
 * Counts a skip against the current holder (reset on every acquisition). Returns undefined when the
 * lease turned out to be free: nothing to count.
 */
export declare function recordSkip(store: LeaseStore, resource: string, skipper: string): Promise<SkipRecord | undefined>;
/** Appends one audit record (best effort callers catch). */
export declare function appendAudit(store: LeaseStore, resource: string, record: Record<string, unknown>): Promise<void>;
export declare function readAudit(store: LeaseStore, resource: string, limit?: number): Promise<AuditRecord[]>;
export interface LeaseRow {
    resource: string;
    owner: string;
    token: number;
    live: boolean;
    expiresInMs: number;
    acquiredAt: Date;
    releasedAt?: Date;
    skipCount: number;
    queueLength: number;
    gateToken: number;
    lastGatePassAt?: Date;
    holder: Record<string, string>;
    /** Expired without a release: its holder crashed or was paused (reap candidates). */
    abandoned: boolean;
}
/** Lists leases (all, or the named resources) with queue length and the gate's last pass. */
export declare function listLeases(store: LeaseStore, resources?: string[]): Promise<LeaseRow[]>;
/** Marks abandoned leases (expired, never released) as reaped, with an audit record each. */
export declare function reapAbandoned(store: LeaseStore, actor: string, only?: string[]): Promise<LeaseRow[]>;
export { Timestamp };
