import type { ConnectionSettings } from '../core/connection';
/**
 * What main hands to post (core.saveState → STATE_* in post), and the files of the state directory
 * (LEASEFENCE_STATE_DIR under RUNNER_TEMP) that main, the heartbeat daemon, the CLI and post share.
 */
/** How far main got. Post acts on `acquired` only; `prepared` means only local files need removing. */
export type Phase = 'prepared' | 'skipped' | 'failed' | 'acquired' | 'forced' | 'dry-run' | 'disabled';
export interface MainState {
    phase: Phase;
    resource?: string;
    owner?: string;
    token?: number;
    ttlMs?: number;
    heartbeatMs?: number;
    /** LEASEFENCE_STATE_DIR. */
    stateDir?: string;
    heartbeatPid?: number;
    /** ISO, server time of the acquisition. */
    acquiredAt?: string;
    waitedMs?: number;
    credentialsFile?: string;
    connection?: ConnectionSettings;
    holder?: string;
    runUrl?: string;
    /** Renewals main made itself while the daemon started (added to the daemon's in the summary). */
    mainRenewals?: number;
    mainRenewFailures?: number;
    /** With slots: the index of the slot held. */
    slot?: number;
    /** How the lease was taken from its previous owner, for the summary. */
    takeover?: string;
    /** Environment mode: the pool and what post must tear down. */
    env?: {
        resource: string;
        worktree: boolean;
        keep: boolean;
        database: boolean;
    };
}
/** The keys given to core.saveState (the runner turns them into STATE_<key>). */
export declare const STATE_KEYS: {
    readonly phase: "phase";
    readonly resource: "resource";
    readonly owner: "owner";
    readonly token: "token";
    readonly ttlMs: "ttl-ms";
    readonly heartbeatMs: "heartbeat-ms";
    readonly stateDir: "state-dir";
    readonly heartbeatPid: "heartbeat-pid";
    readonly acquiredAt: "acquired-at";
    readonly waitedMs: "waited-ms";
    readonly credentialsFile: "credentials-file";
    readonly connection: "connection";
    readonly holder: "holder";
    readonly runUrl: "run-url";
    readonly mainRenewals: "main-renewals";
    readonly mainRenewFailures: "main-renew-failures";
    readonly slot: "slot";
    readonly takeover: "takeover";
    readonly env: "env";
};
export declare function encodeState(s: Partial<MainState>): Record<string, string>;
/** Reads what main saved; undefined when main saved nothing (it failed validation or never ran). */
export declare function decodeState(get: (key: string) => string): MainState | undefined;
export declare const FILES: {
    /** Written by main for the daemon: what to renew and how to reach Firestore (no secret in it). */
    readonly heartbeatConfig: "heartbeat-config.json";
    readonly heartbeatPid: "heartbeat.pid";
    readonly heartbeatStatus: "heartbeat.json";
    readonly heartbeatLog: "heartbeat.log";
    /** The holder's latest deadline (hrtime ns), rewritten by main's own renewals while the daemon starts. */
    readonly handoverDeadline: "deadline-hr-ns";
};
/** performance.now() is per process; process.hrtime (CLOCK_MONOTONIC) is shared by every process. */
export declare function monotonicToHrNs(ms: number, nowHr?: bigint, nowPerf?: number): bigint;
export declare function hrNsToMonotonic(hrNs: bigint, nowHr?: bigint, nowPerf?: number): number;
export declare function writeHandoverDeadline(stateDir: string, deadlineMs: number): void;
/** The handover deadline on this process's performance.now() scale, if main wrote one. */
export declare function readHandoverDeadline(stateDir: string): number | undefined;
export interface HeartbeatConfig {
    resource: string;
    owner: string;
    token: number;
    ttlMs: number;
    heartbeatMs: number;
    maxHoldMs: number;
    connection: ConnectionSettings;
    stateDir: string;
    /**
     * The holder's deadline as process.hrtime (CLOCK_MONOTONIC, shared by every process of the machine),
     * in nanoseconds as a decimal string: performance.now() is per process and cannot cross a spawn.
     */
    deadlineHrNs: string;
    /** hrtime (ns) when the lease was acquired: max-hold counts from there. */
    acquiredHrNs: string;
}
export interface HeartbeatStatus {
    pid: number;
    startedAt: string;
    /** The first renewal after start was confirmed: main may finish. */
    ready: boolean;
    renewals: number;
    failures: number;
    lost: boolean;
    lostReason?: string;
    lastRenewalAt?: string;
    expiresAt?: string;
    lastError?: string;
    /** Set when the daemon exits: why. */
    exitedAt?: string;
    exitReason?: string;
    /** True when the daemon released the lease itself (max-hold). */
    released?: boolean;
}
export declare function writeJsonAtomic(path: string, data: unknown): void;
export declare function readJson<T>(path: string): T | undefined;
export declare function readHeartbeatStatus(stateDir: string | undefined): HeartbeatStatus | undefined;
export declare function ensureDir(dir: string, mode?: number): string;
