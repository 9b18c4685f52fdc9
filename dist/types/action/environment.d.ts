import type { Lease, LeaseStore } from '../core/lease-store';
import { type Environment } from '../env/environment';
import type { ActionInputs, EnvInputs } from './inputs';
/**
 * The action's environment mode (env-slots): lease one slot of an environment pool and provision what
 * the slot means (ports, a cloned schema, a worktree, an env file) through src/env; post tears it down
 * unless env-keep. Thin: the provisioning and teardown live in src/env and are tested there.
 */
export type EnvAcquisition = {
    acquired: true;
    lease: Lease;
    environment: Environment;
    waitedMs: number;
} | {
    acquired: false;
    busy: string;
};
export declare function acquireEnvMode(store: LeaseStore, inputs: ActionInputs & {
    env: EnvInputs;
}, holder: Record<string, string>, signal: AbortSignal): Promise<EnvAcquisition>;
export declare function envOutputs(env: Environment): Record<string, string>;
export type EnvRelease = {
    released: true;
    detail: string;
} | {
    released: false;
    reason: string;
    error?: boolean;
};
/** Post: tear the slot's environment down and release its lease (only while this job still holds it). */
export declare function releaseEnvMode(store: LeaseStore, args: {
    resource: string;
    slot: number;
    owner: string;
    token: number;
    databaseUrl?: string;
    worktree: boolean;
}): Promise<EnvRelease>;
