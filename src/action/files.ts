import { chmodSync, existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ensureDir } from './state'

/**
 * Small filesystem helpers of the action: where the bundle is, the `leasefence` wrapper put on PATH,
 * and processes (the heartbeat) checked and stopped by pid.
 */

/** dist/: every entry file (main.js, post.js, ...) sits next to index.js, and argv[1] is one of them. */
export function distDir(argv1: string | undefined = process.argv[1]): string {
  if (!argv1) throw new Error('leasefence: cannot tell where the bundle is (process.argv[1] is empty)')
  return dirname(realpathSync(argv1))
}

/** Quotes for /bin/sh: everything literal inside single quotes. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

/**
 * Writes `<dir>/leasefence`, which runs the bundle's CLI with the node that runs this action: the node on
 * the job's PATH may be another version, or absent.
 */
export function writeCliWrapper(dir: string, nodePath: string, cliJs: string): string {
  ensureDir(dir, 0o755)
  const file = join(dir, 'leasefence')
  writeFileSync(
    file,
    `#!/bin/sh\n# Written by the leasefence action's main step: the leasefence CLI for the later steps of this job.\nexec ${shellQuote(nodePath)} ${shellQuote(cliJs)} "$@"\n`
  )
  chmodSync(file, 0o755)
  return file
}

/** Linux /proc state letter of a process ('R', 'S', 'Z', ...), or undefined when unknown. */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  } catch {
    return undefined
  }
}

/**
 * True while the process runs. An exited process that nobody has reaped yet (a zombie: its parent, main,
 * is gone and the machine's init may reap late) counts as not running.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
  const state = processState(pid)
  return state !== 'Z' && state !== 'X'
}

/** Whether pid still is the process we started (guards against pid reuse); true where /proc is missing. */
export function looksLike(pid: number, needle: string): boolean {
  if (!existsSync('/proc/self/cmdline')) return true
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)
  } catch {
    return false
  }
}

export type StopOutcome = 'not-running' | 'terminated' | 'killed' | 'not-ours' | 'still-running'

/** SIGTERM, wait up to graceMs for the exit, then SIGKILL and wait a little more. */
export async function stopProcess(pid: number, needle: string, graceMs = 5000): Promise<StopOutcome> {
  if (!isRunning(pid)) return 'not-running'
  if (!looksLike(pid, needle)) return 'not-ours'
  try {
    process.kill(pid, 'SIGTERM')
  } catch {
    return 'not-running'
  }
  if (await waitForExit(pid, graceMs)) return 'terminated'
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    return 'terminated'
  }
  return (await waitForExit(pid, 2000)) ? 'killed' : 'still-running'
}

export async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (!isRunning(pid)) return true
    await new Promise((r) => setTimeout(r, 25))
  }
  return !isRunning(pid)
}
