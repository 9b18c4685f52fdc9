import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { LeaseStore } from '../../src/core/lease-store'
import { checkHistory, ownerOf, type CheckResult } from './checker'
import type { ChaosHistory, FaultEvent, FaultKind, OpEvent, ServerAcquisition } from './history'
import { FaultProxy, type ProxyStats } from './proxy'
import { Prng } from './prng'
import { clearStaleLocks, cloneFor, createRemote, readRemote } from './remote'

/**
 * The chaos run: N workers, each a loop of `leasefence run --on-busy wait -- node step.ts` (the real CLI
 * bundle, dist/cli.js), contend for one resource while a seeded nemesis injects faults:
 *
 *   pause-worker     SIGSTOP of a worker's whole process group (leasefence run, its command, the publish
 *                    and git) for 1.5–2.5 ttl, then SIGCONT;
 *   pause-heartbeat  SIGSTOP of the `leasefence run` process only (the heartbeat), the command runs on;
 *                    also aimed at holders whose step outlasts the ttl, right after their step starts;
 *   kill             SIGKILL of a worker's process group mid-step: no release ever runs;
 *   net              through a TCP proxy (one port per worker): delays, dropped connections, dropped
 *                    replies to requests that went through (ambiguous commits);
 *   skew             some workers' leasefence processes run with their wall clock ±1 h off (constant, or
 *                    jumping there a moment after start), by a --require preload (no faketime needed).
 *
 * Every decision (who, when, how long) is drawn from a PRNG seeded with `seed`; what the processes then
 * do is up to the machine's timing, so a seed reproduces the fault plan, not a byte-identical history.
 */
export type PublishMode = 'gate' | 'gate-force' | 'nogate-force' | 'nogate'
export type FaultSwitch = 'pause-worker' | 'pause-heartbeat' | 'kill' | 'net' | 'skew'
export const ALL_FAULTS: FaultSwitch[] = ['pause-worker', 'pause-heartbeat', 'kill', 'net', 'skew']

export interface ChaosOptions {
  seed: number
  workers: number
  durationMs: number
  ttlMs: number
  heartbeatMs: number
  publish: PublishMode
  faults: FaultSwitch[]
  /**
   * How the step takes leasefence run's SIGTERM on lease loss: `forward` it to the command in flight
   * (leasefence publish dies mid-gate: see SAFETY.md, finding 1), or `wait` for that command to end.
   */
  stepOnSigterm?: 'forward' | 'wait'
  /**
   * Keep going after durationMs, up to maxDurationMs, until this many acquisitions were seen: a run that
   * the lease freeze of SAFETY.md finding 1 stalled early would otherwise have little to check.
   */
  minAcquisitions?: number
  maxDurationMs?: number
  /** Mean time between two periodic faults. */
  faultEveryMs: number
  /** The Firestore emulator, host:port. */
  emulatorHost: string
  projectId?: string
  workDir?: string
  keepWorkDir?: boolean
  log?: (line: string) => void
}

export interface ChaosOutcome {
  options: ChaosOptions
  history: ChaosHistory
  result: CheckResult
  proxy: ProxyStats | undefined
  workDir: string
  elapsedMs: number
  runsStarted: number
  /** Lines of output of runs that ended oddly (exit code other than 0/75, or killed by us). */
  notes: string[]
}

export const PROFILES = {
  /** Inside the normal tests: a few faults of every kind in ~30 s. */
  short: { workers: 5, durationMs: 30_000, ttlMs: 1500, heartbeatMs: 500, faultEveryMs: 2500 },
  /** For SAFETY.md: a few minutes. */
  long: { workers: 8, durationMs: 240_000, ttlMs: 1500, heartbeatMs: 500, faultEveryMs: 1500 }
} as const

const HERE = dirname(fileURLToPath(import.meta.url))
export const ROOT = resolve(HERE, '../..')
export const CLI = join(ROOT, 'dist/cli.js')
const STEP = join(HERE, 'step.ts')
const SKEW = join(HERE, 'skew-clock.cjs')
const RESOURCE = 'chaos/counter'

const mono = () => Number(process.hrtime.bigint()) / 1e6
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

interface ActiveRun {
  id: string
  w: number
  pid: number
  child: ChildProcess
  workMs: number
  acquired: boolean
  stepStarted: boolean
  stepEnded: boolean
  paused?: FaultEvent & { target: number }
  /** An aimed heartbeat pause lasts until the command has ended. */
  resumeOnStepEnd?: boolean
  killed: boolean
  exited: Promise<void>
  tail: string[]
  /** leasefence's own messages ("leasefence: ..."), first five. */
  said: string[]
}

interface Worker {
  index: number
  clone: string
  oplog: string
  host: string
  env: Record<string, string>
  iteration: number
  current?: ActiveRun
}

export async function runChaos(opts: ChaosOptions): Promise<ChaosOutcome> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`)
  const log = opts.log ?? (() => undefined)
  const root = new Prng(opts.seed)
  const planRng = root.fork('plan')
  const workRng = root.fork('work')
  const nemesisRng = root.fork('nemesis')
  const targetRng = root.fork('target')
  const faultsOn = new Set(opts.faults)
  const workDir = opts.workDir ?? mkdtempSync(join(tmpdir(), 'leasefence-chaos-'))
  mkdirSync(workDir, { recursive: true })
  const projectId = opts.projectId ?? `chaos-${opts.seed.toString(36)}-${randomUUID().slice(0, 6)}`
  const faults: FaultEvent[] = []
  const faultLog = join(workDir, 'faults.jsonl')
  const recordFault = (f: FaultEvent) => {
    faults.push(f)
    appendFileSync(faultLog, JSON.stringify(f) + '\n')
  }
  const notes: string[] = []
  const offsets: number[] = [Date.now() - mono()]

  const bare = await createRemote(workDir)
  const proxy = faultsOn.has('net') ? FaultProxy.forEmulator(opts.emulatorHost) : undefined
  const workers: Worker[] = []
  for (let i = 0; i < opts.workers; i++) {
    const clone = join(workDir, `w${i}`)
    await cloneFor(bare, clone)
    const host = proxy ? await proxy.addRoute(`w${i}`) : opts.emulatorHost
    const env: Record<string, string> = {}
    workers.push({ index: i, clone, oplog: join(workDir, `ops-w${i}.jsonl`), host, env, iteration: 0 })
  }
  if (faultsOn.has('skew')) {
    // ±1 h on about 40% of the workers (at least one); half of those jump there shortly after start.
    const skewed = workers.filter(() => planRng.chance(0.4))
    if (skewed.length === 0) skewed.push(workers[planRng.int(0, workers.length - 1)])
    for (const w of skewed) {
      const ms = (planRng.chance(0.5) ? 1 : -1) * 3_600_000
      const afterMs = planRng.chance(0.5) ? Math.round(planRng.float(200, 3000)) : 0
      w.env.NODE_OPTIONS = `--require ${SKEW}`
      w.env.LEASEFENCE_CHAOS_SKEW_MS = String(ms)
      if (afterMs) w.env.LEASEFENCE_CHAOS_SKEW_AFTER_MS = String(afterMs)
      recordFault({ t: mono(), kind: 'skew', w: w.index, skewMs: ms, afterMs })
    }
  }

  const baseEnv: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(LEASEFENCE_|GOOGLE_|GCLOUD_|GCP_|CHAOS_|FIRESTORE_EMULATOR_HOST$|NODE_OPTIONS$)/.test(k)) continue
    baseEnv[k] = v
  }
  let stopping = false
  let runsStarted = 0
  let acquisitionsSeen = 0
  const started = mono()
  const active = new Set<ActiveRun>()

  const oplogWrite = (w: Worker, e: Omit<OpEvent, 'w'>) => appendFileSync(w.oplog, JSON.stringify({ ...e, w: w.index }) + '\n')

  const pause = (r: ActiveRun, kind: 'pause-worker' | 'pause-heartbeat', ms: number, why: string) => {
    if (r.paused || r.killed || stopping) return
    const target = kind === 'pause-worker' ? -r.pid : r.pid
    try {
      process.kill(target, 'SIGSTOP')
    } catch {
      return
    }
    const f = { t: mono(), kind, w: r.w, run: r.id, durationMs: Math.round(ms), why, target }
    r.paused = f
    faults.push(f)
    log(`fault: ${kind} ${r.id} for ${Math.round(ms)}ms (${why})`)
    setTimeout(() => {
      if (r.paused === f) resume(r)
    }, ms)
  }
  const resume = (r: ActiveRun) => {
    const f = r.paused
    if (!f) return
    r.paused = undefined
    r.resumeOnStepEnd = false
    try {
      process.kill(f.target, 'SIGCONT')
    } catch {
      /* gone */
    }
    f.until = mono()
    const { target: _target, ...rest } = f
    appendFileSync(faultLog, JSON.stringify(rest) + '\n')
  }
  const kill = (r: ActiveRun, kind: 'kill' | 'stop', signal: NodeJS.Signals) => {
    if (r.killed) return
    r.killed = signal === 'SIGKILL'
    try {
      if (signal === 'SIGKILL') process.kill(-r.pid, 'SIGKILL')
      else process.kill(r.pid, signal)
    } catch {
      return
    }
    if (r.paused && signal === 'SIGKILL') {
      r.paused.until = mono()
      r.paused = undefined
    }
    recordFault({ t: mono(), kind, w: r.w, run: r.id, signal })
    if (kind === 'kill') log(`fault: kill ${r.id}`)
  }

  const logsDir = join(workDir, 'logs')
  mkdirSync(logsDir, { recursive: true })
  const runTmp = join(workDir, 'tmp')
  mkdirSync(runTmp, { recursive: true })
  const onLine = (wk: Worker, r: ActiveRun, line: string) => {
    appendFileSync(join(logsDir, `${r.id}.log`), `${mono().toFixed(1)} ${line}\n`)
    r.tail.push(line)
    if (r.tail.length > 40) r.tail.shift()
    if (line.startsWith('leasefence: ') && r.said.length < 5) r.said.push(line)
    const t = mono()
    if (line.startsWith('chaos step_start')) {
      r.stepStarted = true
      r.workMs = Number(line.split(' ')[4] ?? 0)
      // Aim a heartbeat pause at a step that outlasts the ttl: the command goes on while the lease expires.
      // It stays stopped until the command has ended (or a cap), so the command publishes meanwhile.
      if (faultsOn.has('pause-heartbeat') && r.workMs > 1.2 * opts.ttlMs) {
        const delay = nemesisRng.float(0, 0.3) * opts.ttlMs
        const cap = r.workMs + 4 * opts.ttlMs + 5000
        setTimeout(() => {
          pause(r, 'pause-heartbeat', cap, 'aimed: step outlasts the ttl')
          if (r.paused) r.resumeOnStepEnd = true
        }, delay)
      }
      return
    }
    if (line.startsWith('chaos step_end')) {
      r.stepEnded = true
      if (r.resumeOnStepEnd) setTimeout(() => resume(r), 50)
      return
    }
    const m = /^leasefence event=(\w+)(.*)$/.exec(line)
    if (!m) return
    const token = Number(/ token=(\d+)/.exec(m[2])?.[1] ?? NaN)
    const reason = /reason="((?:[^"\\]|\\.)*)"/.exec(m[2])?.[1]
    const base = { t, run: r.id, token: Number.isFinite(token) ? token : undefined }
    switch (m[1]) {
      case 'acquire_lock':
        r.acquired = true
        acquisitionsSeen++
        oplogWrite(wk, { ...base, ev: 'acquired', owner: ownerOf(r.id) })
        break
      case 'lock_lost':
        oplogWrite(wk, { ...base, ev: 'lost_notified', reason })
        break
      case 'release_lock':
        oplogWrite(wk, { ...base, ev: 'released' })
        break
      case 'release_skipped':
        oplogWrite(wk, { ...base, ev: 'release_skipped', reason })
        break
    }
  }

  const startRun = (wk: Worker): ActiveRun => {
    const id = `w${wk.index}-r${wk.iteration++}`
    const env: NodeJS.ProcessEnv = {
      ...baseEnv,
      ...wk.env,
      // leasefence run's state directory goes here: a SIGKILLed run leaves it behind, and the work dir goes.
      TMPDIR: runTmp,
      FIRESTORE_EMULATOR_HOST: wk.host,
      METADATA_SERVER_DETECTION: 'none',
      LEASEFENCE_PROJECT: projectId,
      CHAOS_OPLOG: wk.oplog,
      CHAOS_CLONE: wk.clone,
      CHAOS_WORKER: String(wk.index),
      CHAOS_RUN: id,
      CHAOS_SEED: String(opts.seed),
      CHAOS_TTL_MS: String(opts.ttlMs),
      CHAOS_PUBLISH: opts.publish,
      CHAOS_STEP_SIGTERM: opts.stepOnSigterm ?? 'forward',
      CHAOS_CLI: CLI
    }
    const args = [
      CLI, 'run',
      '--resource', RESOURCE,
      '--ttl', `${opts.ttlMs}ms`,
      '--heartbeat', `${opts.heartbeatMs}ms`,
      '--on-busy', 'wait',
      '--wait-timeout', '120s',
      '--kill-grace', '2s',
      '--owner', ownerOf(id),
      '--',
      process.execPath, '--no-warnings', STEP
    ]
    const child = spawn(process.execPath, args, { env, cwd: wk.clone, detached: true, stdio: ['ignore', 'ignore', 'pipe'] })
    runsStarted++
    const r: ActiveRun = {
      id,
      w: wk.index,
      pid: child.pid!,
      child,
      workMs: 0,
      acquired: false,
      stepStarted: false,
      stepEnded: false,
      killed: false,
      tail: [],
      said: [],
      exited: Promise.resolve()
    }
    oplogWrite(wk, { t: mono(), run: id, ev: 'run_start', pid: child.pid })
    createInterface({ input: child.stderr! }).on('line', (line) => onLine(wk, r, line))
    r.exited = new Promise<void>((res) => {
      child.on('close', (code, signal) => {
        if (r.paused) resume(r)
        oplogWrite(wk, { t: mono(), run: id, ev: 'run_exit', code: code ?? undefined, signal: signal ?? undefined })
        if ((code !== 0 && code !== 75) || signal) {
          const said = r.said.filter((l) => !r.tail.slice(-8).includes(l))
          notes.push(`${id} exited ${code ?? signal}${r.killed ? ' (killed by the nemesis)' : ''}:\n    ${[...said, ...r.tail.slice(-8)].join('\n    ')}`)
        }
        res()
      })
      child.on('error', (err) => {
        notes.push(`${id} could not start: ${err.message}`)
        res()
      })
    })
    return r
  }

  const workerLoop = async (wk: Worker) => {
    while (!stopping) {
      const r = startRun(wk)
      wk.current = r
      active.add(r)
      await r.exited
      active.delete(r)
      wk.current = undefined
      if (r.killed) clearStaleLocks(wk.clone)
      await sleep(workRng.float(20, 200))
    }
  }

  const nemesis = async () => {
    const kinds: { kind: FaultKind; weight: number }[] = []
    if (faultsOn.has('pause-worker')) kinds.push({ kind: 'pause-worker', weight: 2 })
    if (faultsOn.has('pause-heartbeat')) kinds.push({ kind: 'pause-heartbeat', weight: 1 })
    if (faultsOn.has('kill')) kinds.push({ kind: 'kill', weight: 1 })
    if (faultsOn.has('net')) kinds.push({ kind: 'net-delay', weight: 2 }, { kind: 'net-drop', weight: 1 }, { kind: 'net-drop-reply', weight: 3 })
    if (kinds.length === 0) return
    const total = kinds.reduce((s, k) => s + k.weight, 0)
    await sleep(1500)
    while (!stopping) {
      await sleep(nemesisRng.float(0.5, 1.5) * opts.faultEveryMs)
      if (stopping) break
      let x = nemesisRng.float(0, total)
      const kind = kinds.find((k) => (x -= k.weight) < 0)?.kind ?? kinds[0].kind
      const runs = [...active].filter((r) => !r.paused && !r.killed)
      const holders = runs.filter((r) => r.stepStarted && !r.stepEnded)
      const preferHolder = targetRng.chance(0.7)
      const pool = preferHolder && holders.length ? holders : runs
      if (pool.length === 0) continue
      const r = targetRng.pick(pool)
      const paused = [...active].filter((a) => a.paused).length
      switch (kind) {
        case 'pause-worker':
        case 'pause-heartbeat':
          if (paused >= Math.max(1, opts.workers - 2)) break
          pause(r, kind, nemesisRng.float(1.5, 2.5) * opts.ttlMs, preferHolder ? 'holder' : 'random')
          break
        case 'kill':
          kill(r, 'kill', 'SIGKILL')
          break
        case 'net-delay': {
          const ms = Math.round(nemesisRng.float(100, 1200))
          const forMs = Math.round(nemesisRng.float(1000, 4000))
          proxy!.delay(`w${r.w}`, ms, forMs)
          recordFault({ t: mono(), kind, w: r.w, run: r.id, delayMs: ms, forMs })
          log(`fault: net-delay w${r.w} +${ms}ms for ${forMs}ms`)
          break
        }
        case 'net-drop': {
          const n = proxy!.dropConnections(`w${r.w}`)
          recordFault({ t: mono(), kind, w: r.w, run: r.id, connections: n })
          log(`fault: net-drop w${r.w} (${n} connections)`)
          break
        }
        case 'net-drop-reply':
          proxy!.dropNextReply(`w${r.w}`, 3000)
          recordFault({ t: mono(), kind, w: r.w, run: r.id })
          log(`fault: net-drop-reply w${r.w}`)
          break
      }
    }
  }

  log(`chaos: seed ${opts.seed}, ${opts.workers} workers, ${opts.durationMs / 1000}s, ttl ${opts.ttlMs}ms, publish ${opts.publish}, step on SIGTERM: ${opts.stepOnSigterm ?? 'forward'}, faults ${[...faultsOn].join(',') || 'none'}; work dir ${workDir}`)
  // Detached process groups outlive us unless killed: on any exit of this process, take them down.
  const killAll = () => {
    for (const r of active) {
      try {
        process.kill(-r.pid, 'SIGKILL')
      } catch {
        /* gone */
      }
    }
  }
  process.on('exit', killAll)
  const loops = workers.map((w) => workerLoop(w))
  const nemesisDone = nemesis()
  const progress = setInterval(() => log(`chaos: ${Math.round((mono() - started) / 1000)}s, ${runsStarted} runs started`), 15_000)
  await sleep(opts.durationMs)
  if (opts.minAcquisitions && acquisitionsSeen < opts.minAcquisitions) {
    log(`chaos: only ${acquisitionsSeen} acquisitions so far; going on until ${opts.minAcquisitions} (at most ${Math.round((opts.maxDurationMs ?? opts.durationMs) / 1000)}s in all)`)
    while (acquisitionsSeen < opts.minAcquisitions && mono() - started < (opts.maxDurationMs ?? opts.durationMs)) await sleep(250)
  }

  // Wind down: no new faults or runs; resume the paused; stop the waiters; let holders finish their step.
  stopping = true
  clearInterval(progress)
  await nemesisDone
  for (const r of active) resume(r)
  for (const r of active) if (!r.acquired) kill(r, 'stop', 'SIGTERM')
  const drainUntil = mono() + 3 * opts.ttlMs + 5000
  while (active.size && mono() < drainUntil) await sleep(100)
  for (const r of active) kill(r, 'stop', 'SIGTERM')
  const hardUntil = mono() + 3000
  while (active.size && mono() < hardUntil) await sleep(100)
  for (const r of active) kill(r, 'stop', 'SIGKILL')
  await Promise.all(loops)
  process.off('exit', killAll)
  await proxy?.close()
  offsets.push(Date.now() - mono())
  const elapsedMs = mono() - started

  // Collect: operation logs, the remote, the server's audit trail.
  const ops: OpEvent[] = []
  for (const w of workers) {
    if (!existsSync(w.oplog)) continue
    for (const line of readFileSync(w.oplog, 'utf8').split('\n')) {
      if (!line.trim()) continue
      try {
        ops.push(JSON.parse(line) as OpEvent)
      } catch {
        /* a line cut short by SIGKILL */
      }
    }
  }
  const { mainline, reachable } = await readRemote(bare)
  const offset = offsets.reduce((s, x) => s + x, 0) / offsets.length
  const acquisitions = await readAcquisitions(opts.emulatorHost, projectId, offset).catch((err: Error) => {
    notes.push(`audit trail not read: ${err.message}`)
    return [] as ServerAcquisition[]
  })
  const history: ChaosHistory = { ttlMs: opts.ttlMs, ops, faults, mainline, reachable, acquisitions }
  writeFileSync(join(workDir, 'history.json'), JSON.stringify(history))
  const result = checkHistory(history)
  writeFileSync(join(workDir, 'result.json'), JSON.stringify({ options: opts, result, proxy: proxy?.stats, notes }, null, 2))
  if (!opts.keepWorkDir && result.ok) rmSync(workDir, { recursive: true, force: true })
  return { options: opts, history, result, proxy: proxy?.stats, workDir, elapsedMs, runsStarted, notes }
}

/** The acquisitions recorded in leases/{id}/audit, their commit times mapped to the monotonic clock. */
async function readAcquisitions(emulatorHost: string, projectId: string, wallMinusMono: number): Promise<ServerAcquisition[]> {
  const saved = process.env.FIRESTORE_EMULATOR_HOST
  process.env.FIRESTORE_EMULATOR_HOST = emulatorHost
  const store = new LeaseStore({ projectId })
  try {
    const snap = await store.leaseRef(RESOURCE).collection('audit').get()
    const out: ServerAcquisition[] = []
    for (const d of snap.docs) {
      const a = d.data() as Record<string, unknown>
      const action = String(a.action ?? '')
      if (!/^(acquire|takeover)/.test(action) || typeof a.fencing !== 'number') continue
      const at = a.at as { seconds: number; nanoseconds: number } | undefined
      if (!at) continue
      const wall = at.seconds * 1000 + at.nanoseconds / 1e6
      out.push({
        token: a.fencing,
        owner: String(a.owner),
        t: wall - wallMinusMono,
        action,
        previousOwner: (a.previousOwner as string | null) ?? null,
        previousToken: Number(a.previousFencing ?? 0)
      })
    }
    return out.sort((x, y) => x.token - y.token)
  } finally {
    await store.close()
    if (saved === undefined) delete process.env.FIRESTORE_EMULATOR_HOST
    else process.env.FIRESTORE_EMULATOR_HOST = saved
  }
}
