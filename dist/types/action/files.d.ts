/**
 * Small filesystem helpers of the action: where the bundle is, the `leasefence` wrapper put on PATH,
 * and processes (the heartbeat) checked and stopped by pid.
 */
/** dist/: every entry file (main.js, post.js, ...) sits next to index.js, and argv[1] is one of them. */
export declare function distDir(argv1?: string | undefined): string;
/** Quotes for /bin/sh: everything literal inside single quotes. */
export declare function shellQuote(s: string): string;
/**
 * Writes `<dir>/leasefence`, which runs the bundle's CLI with the node that runs this action: the node on
 * the job's PATH may be another version, or absent.
 */
export declare function writeCliWrapper(dir: string, nodePath: string, cliJs: string): string;
/** Linux /proc state letter of a process ('R', 'S', 'Z', ...), or undefined when unknown. */
export declare function processState(pid: number): string | undefined;
/**
 * True while the process runs. An exited process that nobody has reaped yet (a zombie: its parent, main,
 * is gone and the machine's init may reap late) counts as not running.
 */
export declare function isRunning(pid: number): boolean;
/** Whether pid still is the process we started (guards against pid reuse); true where /proc is missing. */
export declare function looksLike(pid: number, needle: string): boolean;
export type StopOutcome = 'not-running' | 'terminated' | 'killed' | 'not-ours' | 'still-running';
/** SIGTERM, wait up to graceMs for the exit, then SIGKILL and wait a little more. */
export declare function stopProcess(pid: number, needle: string, graceMs?: number): Promise<StopOutcome>;
export declare function waitForExit(pid: number, ms: number): Promise<boolean>;
