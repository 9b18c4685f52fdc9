import { type OnBusy, type QueueMode } from '../core/options';
import { type SlotLayout } from '../core/slots';
/**
 * The action's inputs, parsed and validated in one pure function (no I/O, no @actions/core), so that
 * every bad input is reported before anything touches Firestore and the rules are unit-testable.
 */
export type EnvLike = Record<string, string | undefined>;
/** The runner's naming: `INPUT_` + name upper-cased with spaces as `_`; hyphens are kept (`INPUT_ON-BUSY`). */
export declare function inputEnvName(name: string): string;
/** Like core.getInput: the value trimmed, '' when unset. */
export declare function readInput(env: EnvLike, name: string): string;
export declare const DEFAULT_MAX_HOLD = "6h";
/** Every input of action.yml, with its default as the runner applies it (the text of action.yml). */
export declare const INPUT_NAMES: readonly ["resource", "ttl", "heartbeat", "on-busy", "wait-timeout", "owner", "max-hold", "project-id", "database", "collection", "gate-collection", "credentials-json", "queue", "stuck-threshold", "github-token", "slots", "port-base", "ports-per-slot", "schema-prefix", "env-file", "force-release", "reason", "dry-run", "env-slots", "env-database-url", "env-template", "env-worktree", "env-base-ref", "env-port-bases", "env-keep"];
export type InputName = (typeof INPUT_NAMES)[number];
/** What the workflow run tells about itself (GITHUB_* variables). */
export interface JobContext {
    repository: string;
    runId: string;
    runAttempt: string;
    job: string;
    workflow: string;
    actor: string;
    serverUrl: string;
    runnerName: string;
    /** `https://github.com/o/r/actions/runs/123/attempts/2`, or '' outside Actions. */
    runUrl: string;
}
export declare function readContext(env: EnvLike): JobContext;
/** Metadata stored in the lease so that a busy job can say who holds it and link to that run. */
export declare function holderMetadata(ctx: JobContext): Record<string, string>;
/**
 * The default owner: unique per job attempt. Repository, run id, attempt and job id name it for people;
 * the random suffix separates matrix legs (which share GITHUB_JOB) and two uses of the action in one job.
 */
export declare function defaultOwner(ctx: JobContext, nonce: string): string | undefined;
/** The parts of a credentials JSON we act on; the secret itself is kept only in `credentialsJson`. */
export interface CredentialsInfo {
    type: string;
    projectId?: string;
    clientEmail?: string;
    /** Values to mask in logs besides the whole JSON (the key, its id, each line of the key). */
    secrets: string[];
}
export interface ActionInputs {
    resource: string;
    ttlMs: number;
    heartbeatMs: number;
    onBusy: OnBusy;
    waitTimeoutMs: number;
    /** The heartbeat stops renewing, and releases, after this long even when post never comes. */
    maxHoldMs: number;
    owner: string;
    ownerDefaulted: boolean;
    /** undefined: the client finds it from the credentials (Application Default Credentials). */
    projectId?: string;
    projectSource: 'input' | 'environment' | 'credentials' | 'emulator' | 'credentials-file';
    database: string;
    collection: string;
    gateCollection: string;
    credentialsJson?: string;
    credentials?: CredentialsInfo;
    context: JobContext;
    /** wait / supersede: FIFO tickets or a free-for-all. */
    queue: QueueMode;
    /** Skips against one holder before a lock_stuck warning (0 = never). */
    stuckThreshold: number;
    /** For the liveness-aware takeover (`${{ github.token }}` by default); '' disables it. */
    githubToken: string;
    /** N-slot leasing: lease one free slot of `resource` among `slots`. */
    slots: number;
    /** Whether the slot inputs were used (then the slot outputs are set). */
    slotted: boolean;
    layout: SlotLayout;
    envFile?: string;
    /** Operator control: expire the lease whoever holds it (with `reason`, audited), acquire nothing. */
    forceRelease: boolean;
    reason: string;
    dryRun: boolean;
    /** Environment mode (env-slots > 0): provision the slot's ports, schema and worktree. */
    env?: EnvInputs;
}
export interface EnvInputs {
    slots: number;
    /** Admin URL of the PostgreSQL database (a secret: masked). */
    databaseUrl?: string;
    template?: string;
    worktree: boolean;
    baseRef: string;
    /** `dev=3000,api=4000,db-proxy=5000` style; '' for the default. */
    portBases: string;
    /** Leave the environment in place at post (the lease is still released). */
    keep: boolean;
}
/** Parses a credentials-json input without ever putting its content into an error message. */
export declare function parseCredentialsJson(text: string): CredentialsInfo;
export interface ParseOptions {
    /** The random part of the default owner (tests pass a fixed one). */
    nonce?: string;
}
/**
 * From the step's environment (INPUT_*, GITHUB_*, GOOGLE_CLOUD_PROJECT, ...) to typed settings.
 * Throws one ValidationError listing every bad input, each with what to change.
 */
export declare function parseInputs(env: EnvLike, opts?: ParseOptions): ActionInputs;
