/**
 * The command each chaos worker runs under `leasefence run` (one step of the workload). Run by plain
 * `node` (its type stripping), so it starts in ~50 ms and imports nothing but node's own modules.
 *
 * A read-modify-write of shared state, published to the shared bare repository:
 *   fetch + reset to origin/main, read counter.txt, work for CHAOS_WORK_MS, write counter + 1, commit with
 *   the fencing token as a trailer (Lease-Fencing-Token: N), then publish:
 *     gate          leasefence publish -- git push origin HEAD:main          (the default)
 *     gate-force    leasefence publish -- git push --force origin HEAD:main  (the gate is the only guard)
 *     nogate-force  git push --force origin HEAD:main                        (the negative control)
 *     nogate        git push origin HEAD:main
 * Every step of that is appended to the worker's operation log (CHAOS_OPLOG, JSON lines, `t` on the
 * machine-wide monotonic clock: process.hrtime, comparable across processes, untouched by clock skew).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const env = process.env
const oplog = env.CHAOS_OPLOG!
const clone = env.CHAOS_CLONE!
const worker = Number(env.CHAOS_WORKER)
const run = env.CHAOS_RUN!
const seed = Number(env.CHAOS_SEED ?? '0')
const ttlMs = Number(env.CHAOS_TTL_MS ?? '1500')
const mode = env.CHAOS_PUBLISH ?? 'gate'
const cli = env.CHAOS_CLI!
const token = Number(env.LEASEFENCE_FENCING_TOKEN)
const owner = env.LEASEFENCE_OWNER ?? ''

const mono = () => Number(process.hrtime.bigint()) / 1e6

/**
 * How long the step works, from the seed and the token (so the orchestrator, which sees the token, knows
 * too): every third token (2, 5, 8, ...) outlasts the ttl (1.5–2.5 ttl), only the heartbeat keeps its lease
 * alive and the nemesis aims a heartbeat pause at it; the others take 0.1–0.6 ttl. The orchestrator reads
 * it from the `chaos step_start` line.
 */
function workTimeMs(seed: number, token: number, ttl: number): number {
  let h = (seed ^ Math.imul(token, 0x9e3779b1)) >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0
  const u = ((h ^ (h >>> 16)) >>> 0) / 4294967296
  return Math.round((token % 3 === 2 ? 1.5 + u : 0.1 + 0.5 * u) * ttl)
}
const workMs = workTimeMs(seed, token, ttlMs)

function log(ev: string, fields: Record<string, unknown> = {}): void {
  appendFileSync(oplog, JSON.stringify({ t: mono(), w: worker, run, ev, token, ...fields }) + '\n')
}

/**
 * leasefence run stops the command with SIGTERM when the lease is lost. CHAOS_STEP_SIGTERM says how this
 * command takes it: `forward` (default) passes it on to the command in flight (git, leasefence publish)
 * and exits at once; `wait` lets the command in flight finish and then exits, starting nothing new (what
 * a shell script does: bash runs its trap only after the foreground command has ended).
 */
const onSigterm = env.CHAOS_STEP_SIGTERM === 'wait' ? 'wait' : 'forward'
let current: ChildProcess | undefined
let terminating = false
process.on('SIGTERM', () => {
  if (terminating) return
  terminating = true
  log('step_sigterm', { onSigterm })
  if (onSigterm === 'forward' || !current) {
    current?.kill('SIGTERM')
    process.exit(143)
  }
  // wait: main() logs how the command in flight ended, then stops at its next checkpoint.
})

/** After each command: a SIGTERM received meanwhile ends the step here (exit 143). */
function checkpoint(): void {
  if (!terminating) return
  log('step_end', { code: 143 })
  process.stderr.write(`chaos step_end ${run}\n`)
  process.exit(143)
}

function exec(cmd: string, args: string[], opts: { quiet?: boolean } = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: clone, stdio: ['ignore', 'pipe', opts.quiet ? 'pipe' : 'inherit'] })
    current = child
    let out = ''
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr?.resume()
    child.on('error', () => resolve({ code: 127, out }))
    child.on('close', (code, signal) => {
      current = undefined
      resolve({ code: code ?? (signal ? 128 : 1), out })
    })
  })
}

async function git(...args: string[]): Promise<string> {
  const r = await exec('git', args, { quiet: true })
  checkpoint()
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} exited ${r.code}`)
  return r.out.trim()
}

async function main(): Promise<number> {
  log('step_start', { owner, pid: process.pid, workMs })
  // Markers for the orchestrator, which reads leasefence run's stderr (this command inherits it).
  process.stderr.write(`chaos step_start ${run} ${token} ${workMs}\n`)
  await git('fetch', '-q', 'origin')
  await git('reset', '-q', '--hard', 'origin/main')
  const base = await git('rev-parse', 'HEAD')
  const counterFile = join(clone, 'counter.txt')
  const counter = Number(readFileSync(counterFile, 'utf8').trim())
  log('step_read', { base, counter })
  await new Promise((r) => setTimeout(r, workMs))
  checkpoint()
  writeFileSync(counterFile, `${counter + 1}\n`)
  await git(
    'commit', '-q', '-a',
    '-m', `counter ${counter + 1} (${run})`,
    '-m', `Lease-Fencing-Token: ${token}\nLease-Owner: ${owner}\nChaos-Run: ${run}\nChaos-Counter: ${counter + 1}`
  )
  const sha = await git('rev-parse', 'HEAD')
  const force = mode === 'gate-force' || mode === 'nogate-force'
  const push = ['push', '-q', ...(force ? ['--force'] : []), 'origin', 'HEAD:main']
  const gated = mode === 'gate' || mode === 'gate-force'
  const start = mono()
  log('publish_attempt', { sha, counter: counter + 1, mode })
  const r = gated ? await exec(process.execPath, [cli, 'publish', '--', 'git', ...push]) : await exec('git', push)
  const outcome = r.code === 0 ? 'acked' : gated && r.code === 75 ? 'refused' : 'failed'
  log('publish_done', { sha, code: r.code, outcome, start })
  checkpoint()
  return r.code === 0 ? 0 : r.code === 75 ? 75 : 1
}

main().then(
  (code) => {
    log('step_end', { code })
    process.stderr.write(`chaos step_end ${run}\n`)
    process.exitCode = code
  },
  (err: unknown) => {
    log('step_end', { code: 1, error: String((err as Error)?.message ?? err) })
    process.stderr.write(`chaos step_end ${run}\n`)
    process.exitCode = 1
  }
)
