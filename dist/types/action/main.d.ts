/**
 * The main step: validate, acquire with the on-busy policy, hand the lease to later steps (env, PATH)
 * and to a detached heartbeat, and finish.
 */
export declare function runMain(env?: NodeJS.ProcessEnv): Promise<void>;
