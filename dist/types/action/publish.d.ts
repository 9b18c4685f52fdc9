import type { ConnectionSettings } from '../core/connection';
import { type GateOutcome } from '../core/publish';
/** The connection main exported for later steps (the same variables the CLI reads). */
export declare function connectionFromEnv(env: NodeJS.ProcessEnv): ConnectionSettings;
/** Why the gate said no, for people: which newer token won, or that the lease was lost. */
export declare function refusalMessage(outcome: Extract<GateOutcome, {
    passed: false;
}>, token: number): string;
/**
 * The publish sub-action: pass the fencing gate with the lease main exported, then run `run` with bash.
 * Exit code: the command's own; 75 when the gate refused (the command did not run).
 */
export declare function runPublish(env?: NodeJS.ProcessEnv): Promise<void>;
