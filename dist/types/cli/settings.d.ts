import { type Command } from 'commander';
import type { ConnectionSettings } from '../core/connection';
/** Connection flags shared by every command; each falls back to an environment variable. */
export declare function addConnectionOptions(cmd: Command): Command;
export interface ConnectionFlags {
    project?: string;
    database?: string;
    collection?: string;
    gateCollection?: string;
    credentials?: string;
}
export declare function connectionFrom(flags: ConnectionFlags): ConnectionSettings;
/** The variables a child command needs to reach the same lease store (for a nested `leasefence publish`). */
export declare function connectionEnv(c: ConnectionSettings): Record<string, string>;
