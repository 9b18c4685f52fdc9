import { LeasefenceError } from '../core/errors';
import type { LeaseStore } from '../core/lease-store';
import { type PortBase, type SlotPorts } from './ports';
import { type Listener } from './process-ports';
import { type CloneResult } from './schema-clone';
import { type WorktreeResult } from './worktree';
/**
 * Environment leases: one isolated environment per slot of an N-slot lease. The lease decides who owns
 * slot i (its fencing token stays attached to it); this module provisions what slot i means (a port
 * band, a database schema cloned from a migrated template, a git worktree, an env file) and tears it
 * down again. The CLI (`leasefence env`) and the action only call these three functions.
 *
 * What a slot gets is a pure function of its index and the layout, and the layout is recorded in the
 * lease's holder metadata, so release and reap tear down exactly what acquire provisioned even when
 * they are not given the same flags. Teardown always happens while holding the slot's lease (taken over
 * from an expired holder if need be), so nobody can be handed the slot while it is being cleaned.
 */
export declare const DEFAULT_ENV_TTL_MS: number;
/** How long release/reap hold the slot while they tear down. */
export declare const TEARDOWN_TTL_MS: number;
export declare const DEFAULT_SCHEMA_PREFIX = "agent_";
export declare const DEFAULT_BASE_REF = "origin/main";
export declare const ENV_HOLDER_KIND = "leasefence-env";
export interface DatabaseSpec {
    /** Admin connection URL (postgres://...). Never recorded anywhere. */
    url: string;
    /** The already-migrated template schema (acquire only). */
    template?: string;
    /** Copy the template's rows too. Default false. */
    copyData?: boolean;
}
export interface WorktreeSpec {
    /** A directory inside the repository (default: cwd). */
    repo?: string;
    /** Default origin/main. */
    baseRef?: string;
}
export interface EnvironmentLayout {
    portBases?: PortBase[] | string;
    portsPerSlot?: number | string;
    schemaPrefix?: string;
}
export interface EnvironmentSpec extends EnvironmentLayout {
    /** The environment pool's name: slot i is the lease `resource#slot-i`. */
    resource: string;
    database?: DatabaseSpec;
    worktree?: WorktreeSpec | boolean;
}
export type StepName = 'lease' | 'ports' | 'processes' | 'schema' | 'worktree' | 'env-file';
export interface Step {
    step: StepName;
    /** What happened: created, kept, dropped, absent, stopped, skipped, released, failed... */
    action: string;
    detail: string;
}
export type ProgressSink = (step: Step) => void;
export interface AcquireEnvironmentOptions extends EnvironmentSpec {
    slots: number;
    agentId: string;
    /** Lease ttl. The CLI exits after acquiring, so it is long (default 2h): `env release` ends it. */
    ttlMs?: number;
    onBusy?: 'fail' | 'wait' | 'skip';
    waitTimeoutMs?: number;
    pollMs?: number;
    signal?: AbortSignal;
    envFile?: string;
    /** Stop processes found listening on the slot's ports (leftovers of a crashed holder). Default false: warn. */
    reclaimPorts?: boolean;
    /** Extra holder metadata (run URL...). */
    holder?: Record<string, string>;
    onStep?: ProgressSink;
}
export interface Environment {
    resource: string;
    slot: number;
    leaseResource: string;
    agentId: string;
    token: number;
    expiresAt: Date;
    /** The same agent held this slot live already: its schema and worktree were kept. */
    reused: boolean;
    previousOwner?: string;
    previousExpired: boolean;
    ports: Record<string, number>;
    devPort: number;
    /** e.g. dev=3010-3019,api=4010-4019 */
    bands: string;
    schema?: string;
    databaseUrl?: string;
    clone?: CloneResult;
    worktree?: WorktreeResult;
    /** The variables of the env file. */
    env: Record<string, string>;
    envFile?: string;
    /** Processes listening on the slot's ports when it was acquired (not stopped unless reclaimPorts). */
    portsInUse: Listener[];
    warnings: string[];
    steps: Step[];
}
export type AcquireEnvironmentResult = {
    acquired: true;
    environment: Environment;
} | {
    acquired: false;
    busy: string;
};
export declare function schemaName(prefix: string, slot: number): string;
/**
 * Leases a free slot and provisions its environment: ports, schema (cloned from the template), worktree,
 * env file. Everything is validated before anything is written. If provisioning fails, what this call
 * created is removed and the lease released before the error is thrown.
 */
export declare function acquireEnvironment(store: LeaseStore, opts: AcquireEnvironmentOptions): Promise<AcquireEnvironmentResult>;
export interface TeardownSpec extends EnvironmentLayout {
    database?: DatabaseSpec;
    worktree?: WorktreeSpec | boolean;
    /** SIGTERM → SIGKILL grace for processes on the slot's ports. Default 5s. */
    killGraceMs?: number;
    onStep?: ProgressSink;
}
export interface TeardownReport {
    resource: string;
    slot: number;
    leaseResource: string;
    /** released: the lease was given back; held: a step failed and the slot stays held (for TEARDOWN_TTL) */
    lease: 'released' | 'held' | 'absent';
    steps: Step[];
    errors: string[];
}
/** The environment of a slot could not be fully torn down; the slot stays held for a while. */
export declare class TeardownError extends LeasefenceError {
    readonly report: TeardownReport;
    constructor(report: TeardownReport);
}
export interface ReleaseEnvironmentOptions extends TeardownSpec {
    resource: string;
    slot: number;
    agentId: string;
    /** When given, the slot must still carry this token (a newer acquisition's environment is not torn down). */
    token?: number;
}
/**
 * The holder gives its environment back: tears it down while still holding the slot, then releases the
 * lease. Refused (LeaseBusyError) when another agent holds the slot live, or when `token` is given and
 * the slot has been acquired again since. A slot whose lease already expired or was released is cleaned
 * too, after taking it back.
 */
export declare function releaseEnvironment(store: LeaseStore, opts: ReleaseEnvironmentOptions): Promise<TeardownReport>;
export interface ReapEnvironmentsOptions extends TeardownSpec {
    resource: string;
    /** How many slots the pool has (slots 0..slots-1 are looked at); default: every slot lease of the resource found. */
    slots?: number;
    /** Only this slot; refused with LeaseBusyError when it is held live. */
    slot?: number;
    /** Only slots whose lease expired without a release (crashed holders); default: every slot not held live. */
    expiredOnly?: boolean;
    actor: string;
}
export interface ReapedSlot {
    slot: number;
    leaseResource: string;
    outcome: 'reaped' | 'live' | 'unused' | 'released' | 'failed';
    /** The holder whose environment this was. */
    previousOwner?: string;
    detail: string;
    report?: TeardownReport;
}
/**
 * Tears down the environments of slots nobody holds: each is taken over (as `reap:<actor>`), torn down
 * and released, with an `env_reap` audit record. A slot held live is never touched (with `slot`: refused).
 */
export declare function reapEnvironments(store: LeaseStore, opts: ReapEnvironmentsOptions): Promise<ReapedSlot[]>;
/** The slot indices that have a lease document (`resource#slot-i`), ascending. */
export declare function discoverSlots(store: LeaseStore, resource: string): Promise<number[]>;
export interface RenewEnvironmentOptions {
    resource: string;
    slot: number;
    agentId: string;
    ttlMs?: number;
}
/** Extends the slot's lease by ttl (default 2h) while this agent still holds it. */
export declare function renewEnvironment(store: LeaseStore, opts: RenewEnvironmentOptions): Promise<{
    token: number;
    expiresAt: Date;
}>;
/** The ports of a slot (for `env ready` and others that need no lease). */
export declare function environmentPorts(slot: number, layout?: EnvironmentLayout): SlotPorts;
