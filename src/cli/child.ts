import { spawn, type ChildProcess } from 'node:child_process'

export interface Supervised {
  child: ChildProcess
  /** Resolves with the exit code (128 + signal number when killed by a signal). */
  exited: Promise<number>
  /** SIGTERM now, SIGKILL after graceMs if still running. */
  terminate(graceMs: number): void
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 }

/** Runs CMD with inherited stdio; the exit code mirrors a shell's. */
export function runChild(cmd: string, args: string[], env: NodeJS.ProcessEnv): Supervised {
  const child = spawn(cmd, args, { stdio: 'inherit', env })
  const exited = new Promise<number>((resolve) => {
    child.on('error', (err) => {
      process.stderr.write(`leasefence: could not start ${cmd}: ${err.message}\n`)
      resolve(127)
    })
    child.on('exit', (code, signal) => resolve(code ?? 128 + (SIGNAL_NUMBERS[signal ?? ''] ?? 1)))
  })
  let killTimer: NodeJS.Timeout | undefined
  exited.then(() => clearTimeout(killTimer))
  return {
    child,
    exited,
    terminate(graceMs: number) {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      killTimer ??= setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      }, graceMs)
    }
  }
}

/** Forwards SIGINT/SIGTERM/SIGHUP to `onSignal` while installed; returns the uninstaller. */
export function onTerminationSignals(onSignal: (sig: NodeJS.Signals) => void): () => void {
  const sigs: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']
  for (const s of sigs) process.on(s, onSignal)
  return () => {
    for (const s of sigs) process.off(s, onSignal)
  }
}

export function signalExitCode(sig: NodeJS.Signals): number {
  return 128 + (SIGNAL_NUMBERS[sig] ?? 1)
}
