/**
 * The two switches operators reach for:
 * - dry run (LEASEFENCE_DRY_RUN=1 / input dry-run): read, log what would happen, write nothing, and
 *   always proceed as if acquired (the gate too);
 * - disabled (LEASEFENCE_DISABLED=1): no lease at all, for an emergency rollback; said loudly.
 */
export type RunMode = 'normal' | 'dry-run' | 'disabled';
export declare function parseBool(value: string | undefined, name: string): boolean;
export declare function runMode(env?: NodeJS.ProcessEnv, dryRunInput?: string): RunMode;
export declare const DISABLED_BANNER = "LEASEFENCE_DISABLED is set: NO LEASE IS TAKEN and nothing is fenced. Concurrent runs can clobber each other.";
