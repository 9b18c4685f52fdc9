import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { existsSync } from 'node:fs'
import { setPriority } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

/**
 * Helpers for tests that run real OS processes: the CLI bundle (dist/cli.js, run with this Node as users
 * run it) and small TypeScript workers run through the repository's tsx.
 */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
export const CLI = join(ROOT, 'dist/cli.js')
export const SUPPORT = join(ROOT, 'test/support')

export interface Finished {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  ms: number
}

/** The environment a child needs to reach the test emulator, without any real credentials. */
export function emulatorEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const k of Object.keys(env)) {
    if (k.startsWith('LEASEFENCE_') || k === 'GOOGLE_APPLICATION_CREDENTIALS' || k === 'GOOGLE_CLOUD_PROJECT' || k === 'GCLOUD_PROJECT' || k === 'GCP_PROJECT') {
      delete env[k]
    }
  }
  env.FIRESTORE_EMULATOR_HOST = process.env.FIRESTORE_EMULATOR_HOST
  env.METADATA_SERVER_DETECTION = 'none'
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k]
    else env[k] = v
  }
  return env
}

/** Waits for a spawned process to end and collects its output. */
export function collect(child: ChildProcess, timeoutMs = 60_000): Promise<Finished> {
  const started = performance.now()
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`process ${child.pid} did not finish within ${timeoutMs}ms\nstdout:\n${stdout}\nstderr:\n${stderr}`))
    }, timeoutMs)
    child.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolvePromise({ code, signal, stdout, stderr, ms: performance.now() - started })
    })
  })
}

export interface CliOptions {
  env?: Record<string, string | undefined>
  cwd?: string
  timeoutMs?: number
}

function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build`)
}

/** Starts `node dist/cli.js ARGS` (this Node, which is the repository's Node 24 under npm/npx). */
export function startCli(args: string[], opts: CliOptions = {}): ChildProcess {
  assertBuilt()
  return spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: emulatorEnv(opts.env),
    stdio: ['ignore', 'pipe', 'pipe']
  })
}

/** Runs `node dist/cli.js ARGS` to the end. */
export function runCli(args: string[], opts: CliOptions = {}): Promise<Finished> {
  return collect(startCli(args, opts), opts.timeoutMs ?? 60_000)
}

/**
 * Spawns a Node script with this Node. `tsx` loads the repository's tsx first (for TypeScript sources);
 * `preload` files are `--require`d before anything else. `nice` lowers the child's scheduling priority:
 * a crowd of workers starting at once then does not starve the emulator and other test files' heartbeats
 * of CPU (the race among the workers themselves stays fair, as they all share the same priority).
 */
export function spawnNode(
  file: string,
  opts: { env?: Record<string, string | undefined>; preload?: string[]; tsx?: boolean; nice?: number } & SpawnOptions = {}
): ChildProcess {
  const { env, preload = [], tsx = false, nice, ...rest } = opts
  const args = [...preload.flatMap((p) => ['--require', p]), ...(tsx ? ['--import', 'tsx'] : []), file]
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], ...rest, env: emulatorEnv(env) })
  if (nice && child.pid) {
    try {
      setPriority(child.pid, nice)
    } catch {
      // Not allowed here: the test still works, only with more CPU contention.
    }
  }
  return child
}

/**
 * Reads a child's stdout as JSON lines: `next()` resolves with the next parsed line (non-JSON lines are
 * skipped), or rejects after `timeoutMs` or when the stream ends.
 */
export class JsonLines<T = Record<string, unknown>> {
  private readonly queue: T[] = []
  private readonly waiters: { resolve: (v: T) => void; reject: (e: Error) => void }[] = []
  private ended = false
  stderr = ''

  constructor(private readonly child: ChildProcess) {
    const rl = createInterface({ input: child.stdout! })
    rl.on('line', (line) => {
      let value: T
      try {
        value = JSON.parse(line) as T
      } catch {
        return
      }
      const w = this.waiters.shift()
      if (w) w.resolve(value)
      else this.queue.push(value)
    })
    rl.on('close', () => {
      this.ended = true
      for (const w of this.waiters.splice(0)) w.reject(new Error(`process ${child.pid} ended: ${this.stderr}`))
    })
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (this.stderr += d))
  }

  next(timeoutMs = 30_000): Promise<T> {
    const v = this.queue.shift()
    if (v !== undefined) return Promise.resolve(v)
    if (this.ended) return Promise.reject(new Error(`process ${this.child.pid} ended: ${this.stderr}`))
    return new Promise<T>((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(entry)
        if (i >= 0) this.waiters.splice(i, 1)
        reject(new Error(`no line from process ${this.child.pid} within ${timeoutMs}ms; stderr:\n${this.stderr}`))
      }, timeoutMs)
      const entry = {
        resolve: (x: T) => {
          clearTimeout(timer)
          resolvePromise(x)
        },
        reject: (e: Error) => {
          clearTimeout(timer)
          reject(e)
        }
      }
      this.waiters.push(entry)
    })
  }
}

/** True while a process with this pid exists (signal 0 probes without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes (then throws with `what`). */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 10_000, everyMs = 50): Promise<NonNullable<T>> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const v = await check()
    if (v) return v as NonNullable<T>
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
