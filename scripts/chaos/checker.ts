import type { ChaosHistory, FaultEvent, OpEvent, ServerAcquisition } from './history'

/**
 * The safety checker. It reads the remote's history and the operation logs and reports every violation
 * of what fencing promises. It only reports what the records prove: a time bracket that could go either
 * way counts in favour of the system (and is counted in `stats.ambiguousWindows` instead).
 *
 *  split-brain      two holders whose holds overlap in real time both published inside the overlap:
 *                   the older one's publish started after the newer one had acquired, and the newer one's
 *                   publish was acknowledged before the older one stopped thinking it held the lease.
 *  stale-publish    a holder's publish started after a newer token had been acquired and was acknowledged
 *                   (split-brain without the newer holder publishing inside the overlap).
 *  token-order      a fencing token that does not increase along main's history.
 *  lost-publish     an acknowledged publish whose commit is not in the remote's main.
 *  refused-landed   a publish the gate refused whose commit is in the remote anyway.
 *  duplicate-token  one token acquired by two owners (mutual exclusion itself failed).
 *  lost-not-told    a holder whose lease another acquired was not told within one ttl of that moment
 *                   (time it spent stopped by SIGSTOP not counted: nothing can tell a stopped process), or
 *                   whose command ended without it ever being told. Killed holders are exempt.
 */
export type ViolationKind =
  | 'split-brain'
  | 'stale-publish'
  | 'token-order'
  | 'lost-publish'
  | 'refused-landed'
  | 'duplicate-token'
  | 'lost-not-told'

export interface Violation {
  kind: ViolationKind
  message: string
  runs?: string[]
  tokens?: number[]
}

export interface CheckStats {
  runs: number
  acquisitions: number
  /** Acquisitions that followed another owner's lease (released or taken over). */
  handovers: number
  /** Acquisitions of a lease whose holder had not released it (expired: paused, killed, cut off). */
  takeovers: number
  publishAttempts: number
  publishesAcked: number
  publishesRefused: number
  publishesFailed: number
  commitsOnMain: number
  finalCounter?: number
  lostNotified: number
  stepsTerminated: number
  pausesWorker: number
  pausesHeartbeat: number
  kills: number
  netDelays: number
  netDrops: number
  netDropReplies: number
  skewedWorkers: number
  /** Publishes acknowledged although they may have landed after a newer acquisition (gate → push gap). */
  ambiguousWindows: number
  /** told − (server time of the takeover), paused time excluded: negative = told before the takeover. */
  notifyLatencyMs: number[]
  /** Liveness, not safety: the longest time between two consecutive acquisitions. */
  longestGapMs: number
}

export interface CheckResult {
  ok: boolean
  violations: Violation[]
  stats: CheckStats
}

interface Publish {
  sha: string
  start: number
  done: number
  outcome: 'acked' | 'refused' | 'failed'
}

interface RunInfo {
  run: string
  w: number
  owner: string
  token?: number
  acquiredAt?: number
  stepStart?: number
  stepEnd?: number
  runExit?: number
  exitCode?: number
  told?: number
  killedAt?: number
  publishes: Publish[]
  pauses: { from: number; to: number }[]
}

/** Margin for comparing times taken by different processes and the server (ms). */
export const TIME_MARGIN_MS = 5

export function ownerOf(run: string): string {
  return `chaos-${run}`
}

export function checkHistory(h: ChaosHistory): CheckResult {
  const violations: Violation[] = []
  const runs = collectRuns(h.ops, h.faults)
  const byOwner = new Map<string, RunInfo>()
  for (const r of runs.values()) byOwner.set(r.owner, r)

  // Acquisitions: the server's record when there is one, else what the runs logged.
  const acquisitions = new Map<number, ServerAcquisition>()
  for (const a of h.acquisitions) {
    const seen = acquisitions.get(a.token)
    if (seen && seen.owner !== a.owner) {
      violations.push({
        kind: 'duplicate-token',
        message: `token ${a.token} was acquired by both ${seen.owner} and ${a.owner}`,
        tokens: [a.token]
      })
    }
    if (!seen || a.t < seen.t) acquisitions.set(a.token, a)
  }
  for (const r of runs.values()) {
    if (r.token === undefined || r.acquiredAt === undefined) continue
    const a = acquisitions.get(r.token)
    if (a && a.owner !== r.owner) {
      violations.push({
        kind: 'duplicate-token',
        message: `${r.run} logged token ${r.token}, which the server records for ${a.owner}`,
        runs: [r.run],
        tokens: [r.token]
      })
    } else if (!a) {
      acquisitions.set(r.token, { token: r.token, owner: r.owner, t: r.acquiredAt, action: 'acquire', previousOwner: null, previousToken: 0 })
    }
  }
  const tokens = [...acquisitions.keys()].sort((x, y) => x - y)
  const acqTime = (token: number) => acquisitions.get(token)!.t

  // Holds: from the server's acquisition to the moment the holder stopped thinking it held the lease.
  const holdEnd = (r: RunInfo) => minDefined(r.told, r.stepEnd, r.runExit, r.killedAt) ?? Infinity

  let ambiguous = 0
  const reported = new Set<string>()
  for (const a of runs.values()) {
    if (a.token === undefined) continue
    const later = tokens.filter((t) => t > a.token! && acquisitions.get(t)!.owner !== a.owner)
    if (later.length === 0) continue
    for (const p of a.publishes) {
      if (p.outcome !== 'acked') continue
      const newer = later.filter((t) => acqTime(t) + TIME_MARGIN_MS <= p.start)
      if (newer.length === 0) {
        if (acqTime(later[0]) < p.done) ambiguous++
        continue
      }
      // Did one of those newer holders publish while this one still thought it held the lease?
      const endA = holdEnd(a)
      let partner: { run: RunInfo; q: Publish } | undefined
      for (const t of newer) {
        const b = byOwner.get(acquisitions.get(t)!.owner)
        const q = b?.publishes.find((x) => x.outcome === 'acked' && x.done + TIME_MARGIN_MS <= endA)
        if (b && q) {
          partner = { run: b, q }
          break
        }
      }
      const key = `${a.run}:${p.sha}`
      if (reported.has(key)) continue
      reported.add(key)
      if (partner) {
        violations.push({
          kind: 'split-brain',
          message:
            `${a.run} (token ${a.token}) and ${partner.run.run} (token ${partner.run.token}) both published while both held the lease: ` +
            `${a.run} started publishing ${fmt(p.start - acqTime(partner.run.token!))} after token ${partner.run.token} was acquired, ` +
            `and ${partner.run.run}'s publish was acknowledged ${fmt(endA - partner.q.done)} before ${a.run} stopped holding`,
          runs: [a.run, partner.run.run],
          tokens: [a.token!, partner.run.token!]
        })
      } else {
        violations.push({
          kind: 'stale-publish',
          message: `${a.run} (token ${a.token}) published ${p.sha.slice(0, 8)} ${fmt(p.start - acqTime(newer[0]))} after token ${newer[0]} was acquired`,
          runs: [a.run],
          tokens: [a.token!, newer[0]]
        })
      }
    }
  }

  // The remote: tokens increase along main; acknowledged publishes are there; refused ones are not.
  for (let i = 1; i < h.mainline.length; i++) {
    const prev = h.mainline[i - 1]
    const cur = h.mainline[i]
    if (prev.token === undefined || cur.token === undefined) continue
    if (cur.token < prev.token || (cur.token === prev.token && cur.owner !== prev.owner)) {
      violations.push({
        kind: 'token-order',
        message: `main has ${cur.sha.slice(0, 8)} (token ${cur.token}, ${cur.owner}) after ${prev.sha.slice(0, 8)} (token ${prev.token}, ${prev.owner})`,
        tokens: [prev.token, cur.token]
      })
    }
  }
  const reachable = new Set(h.reachable)
  for (const r of runs.values()) {
    for (const p of r.publishes) {
      if (p.outcome === 'acked' && !reachable.has(p.sha)) {
        violations.push({
          kind: 'lost-publish',
          message: `${r.run} (token ${r.token}) was told its publish of ${p.sha.slice(0, 8)} succeeded, but main does not contain it`,
          runs: [r.run],
          tokens: r.token === undefined ? [] : [r.token]
        })
      }
      if (p.outcome === 'refused' && reachable.has(p.sha)) {
        violations.push({
          kind: 'refused-landed',
          message: `${r.run} (token ${r.token}) was refused by the gate, yet ${p.sha.slice(0, 8)} is on main`,
          runs: [r.run],
          tokens: r.token === undefined ? [] : [r.token]
        })
      }
    }
  }

  // Lost leases: the holder is told within one ttl of the takeover (its stopped time not counted).
  const notifyLatencyMs: number[] = []
  let takeovers = 0
  let handovers = 0
  for (const t of tokens) {
    const b = acquisitions.get(t)!
    if (!b.previousOwner || b.previousOwner === b.owner) continue
    handovers++
    if (b.action === 'acquire_after_release') continue
    takeovers++
    const a = byOwner.get(b.previousOwner)
    if (!a) continue // an acquisition no run knew about (its reply was lost and the run gave up)
    const activeEnd = minDefined(a.stepEnd, a.runExit, a.killedAt) ?? Infinity
    if (activeEnd + TIME_MARGIN_MS < b.t) continue // it had finished before the takeover
    let deadline = b.t + h.ttlMs
    for (let i = 0; i < 10; i++) {
      const next = b.t + h.ttlMs + pausedWithin(a.pauses, b.t, deadline)
      if (next === deadline) break
      deadline = next
    }
    deadline += TIME_MARGIN_MS
    if (a.killedAt !== undefined && a.killedAt <= deadline && (a.told === undefined || a.told > a.killedAt)) continue
    if (a.told !== undefined && a.told <= deadline) {
      notifyLatencyMs.push(a.told - b.t - pausedWithin(a.pauses, b.t, a.told))
      continue
    }
    violations.push({
      kind: 'lost-not-told',
      message:
        a.told === undefined
          ? `${a.run} (token ${a.token}) lost the lease to token ${t} and was never told; its command ran on ${fmt(activeEnd - b.t)} after the takeover` +
            (a.exitCode !== undefined ? ` and leasefence run exited ${a.exitCode}` : '')
          : `${a.run} (token ${a.token}) was told ${fmt(a.told - b.t)} after token ${t} took over (ttl ${h.ttlMs}ms, ${fmt(pausedWithin(a.pauses, b.t, a.told))} of it stopped)`,
      runs: [a.run],
      tokens: [a.token ?? 0, t]
    })
  }

  const runList = [...runs.values()]
  const publishes = runList.flatMap((r) => r.publishes)
  const count = (k: FaultEvent['kind']) => h.faults.filter((f) => f.kind === k).length
  const last = h.mainline[h.mainline.length - 1]
  const stats: CheckStats = {
    runs: runList.length,
    acquisitions: tokens.length,
    handovers,
    takeovers,
    publishAttempts: publishes.length,
    publishesAcked: publishes.filter((p) => p.outcome === 'acked').length,
    publishesRefused: publishes.filter((p) => p.outcome === 'refused').length,
    publishesFailed: publishes.filter((p) => p.outcome === 'failed').length,
    commitsOnMain: h.mainline.filter((c) => c.token !== undefined).length,
    finalCounter: last?.counter,
    lostNotified: h.ops.filter((e) => e.ev === 'lost_notified').length,
    stepsTerminated: h.ops.filter((e) => e.ev === 'step_sigterm').length,
    pausesWorker: count('pause-worker'),
    pausesHeartbeat: count('pause-heartbeat'),
    kills: count('kill'),
    netDelays: count('net-delay'),
    netDrops: count('net-drop'),
    netDropReplies: count('net-drop-reply'),
    skewedWorkers: new Set(h.faults.filter((f) => f.kind === 'skew').map((f) => f.w)).size,
    ambiguousWindows: ambiguous,
    notifyLatencyMs,
    longestGapMs: tokens.slice(1).reduce((m, t, i) => Math.max(m, acqTime(t) - acqTime(tokens[i])), 0)
  }
  return { ok: violations.length === 0, violations, stats }
}

function collectRuns(ops: OpEvent[], faults: FaultEvent[]): Map<string, RunInfo> {
  const runs = new Map<string, RunInfo>()
  const get = (e: { run?: string; w: number }) => {
    const id = e.run!
    let r = runs.get(id)
    if (!r) {
      r = { run: id, w: e.w, owner: ownerOf(id), publishes: [], pauses: [] }
      runs.set(id, r)
    }
    return r
  }
  const sorted = [...ops].sort((x, y) => x.t - y.t)
  const attempts = new Map<string, number>()
  for (const e of sorted) {
    const r = get(e)
    if (typeof e.token === 'number' && Number.isFinite(e.token) && e.token > 0) r.token ??= e.token
    switch (e.ev) {
      case 'acquired':
        r.acquiredAt ??= e.t
        if (typeof e.owner === 'string') r.owner = e.owner
        break
      case 'step_start':
        r.stepStart ??= e.t
        break
      case 'step_end':
        r.stepEnd ??= e.t
        break
      case 'publish_attempt':
        attempts.set(`${e.run}:${String(e.sha)}`, e.t)
        break
      case 'publish_done': {
        const sha = String(e.sha)
        const outcome = e.outcome as Publish['outcome']
        r.publishes.push({ sha, start: (e.start as number | undefined) ?? attempts.get(`${e.run}:${sha}`) ?? e.t, done: e.t, outcome })
        if (outcome === 'refused') r.told = minDefined(r.told, e.t)
        break
      }
      case 'step_sigterm':
      case 'lost_notified':
        r.told = minDefined(r.told, e.t)
        break
      case 'run_exit':
        r.runExit ??= e.t
        r.exitCode = typeof e.code === 'number' ? e.code : undefined
        if (e.code === 75) r.told = minDefined(r.told, e.t)
        break
    }
  }
  for (const f of faults) {
    if (!f.run) continue
    const r = runs.get(f.run)
    if (!r) continue
    if (f.kind === 'kill' || f.kind === 'stop') r.killedAt = minDefined(r.killedAt, f.t)
    if (f.kind === 'pause-worker' || f.kind === 'pause-heartbeat') r.pauses.push({ from: f.t, to: f.until ?? Infinity })
  }
  return runs
}

/** Time within [from, to] covered by the pauses. */
export function pausedWithin(pauses: { from: number; to: number }[], from: number, to: number): number {
  let total = 0
  for (const p of pauses) total += Math.max(0, Math.min(p.to, to) - Math.max(p.from, from))
  return total
}

function minDefined(...xs: (number | undefined)[]): number | undefined {
  let m: number | undefined
  for (const x of xs) if (x !== undefined && (m === undefined || x < m)) m = x
  return m
}

function fmt(ms: number): string {
  return Number.isFinite(ms) ? `${Math.round(ms)}ms` : 'indefinitely'
}

export function formatViolations(vs: Violation[]): string {
  if (vs.length === 0) return 'no violations'
  return vs.map((v) => `  [${v.kind}] ${v.message}`).join('\n')
}
