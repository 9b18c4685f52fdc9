import { Command } from 'commander';
export declare const VERSION = "0.1.0";
export declare function buildProgram(): Command;
/** Runs the CLI; resolves with the process exit code. */
export declare function runCli(argv: string[]): Promise<number>;
