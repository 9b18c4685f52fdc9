import { type ChildProcess } from 'node:child_process';
export interface Supervised {
    child: ChildProcess;
    /** Resolves with the exit code (128 + signal number when killed by a signal). */
    exited: Promise<number>;
    /** SIGTERM now, SIGKILL after graceMs if still running. */
    terminate(graceMs: number): void;
}
/** Runs CMD with inherited stdio; the exit code mirrors a shell's. */
export declare function runChild(cmd: string, args: string[], env: NodeJS.ProcessEnv): Supervised;
/** Forwards SIGINT/SIGTERM/SIGHUP to `onSignal` while installed; returns the uninstaller. */
export declare function onTerminationSignals(onSignal: (sig: NodeJS.Signals) => void): () => void;
export declare function signalExitCode(sig: NodeJS.Signals): number;
