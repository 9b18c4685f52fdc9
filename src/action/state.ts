import { existsSync, readFileSync, writeFileSync, renameSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { ConnectionSettings } from '../core/connection'

/**
 * What main hands to post (core.saveState → STATE_* in post), and the files of the state directory
 * (LEASEFENCE_STATE_DIR under RUNNER_TEMP) that main, the heartbeat daemon, the CLI and post share.
 */

/** How far main got. Post acts on `acquired` only; `prepared` means only local files need removing. */
export type Phase = 'prepared' | 'skipped' | 'failed' | 'acquired' | 'forced' | 'dry-run' | 'disabled'

export interface MainState {
  phase: Phase
  resource?: string
  owner?: string
  token?: number
  ttlMs?: number
  heartbeatMs?: number
  /** LEASEFENCE_STATE_DIR. */
  stateDir?: string
  heartbeatPid?: number
  /** ISO, server time of the acquisition. */
  acquiredAt?: string
  waitedMs?: number
  credentialsFile?: string
  connection?: ConnectionSettings
  holder?: string
  runUrl?: string
  /** Renewals main made itself while the daemon started (added to the daemon's in the summary). */
  mainRenewals?: number
  mainRenewFailures?: number
  /** With slots: the index of the slot held. */
  slot?: number
  /** How the lease was taken from its previous owner, for the summary. */
  takeover?: string
  /** Environment mode: the pool and what post must tear down. */
  env?: { resource: string; worktree: boolean; keep: boolean; database: boolean }
}

/** The keys given to core.saveState (the runner turns them into STATE_<key>). */
export const STATE_KEYS = {
  phase: 'phase',
  resource: 'resource',
  owner: 'owner',
  token: 'token',
  ttlMs: 'ttl-ms',
  heartbeatMs: 'heartbeat-ms',
  stateDir: 'state-dir',
  heartbeatPid: 'heartbeat-pid',
  acquiredAt: 'acquired-at',
  waitedMs: 'waited-ms',
  credentialsFile: 'credentials-file',
  connection: 'connection',
  holder: 'holder',
  runUrl: 'run-url',
  mainRenewals: 'main-renewals',
  mainRenewFailures: 'main-renew-failures',
  slot: 'slot',
  takeover: 'takeover',
  env: 'env'
} as const satisfies Record<keyof MainState, string>

export function encodeState(s: Partial<MainState>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, key] of Object.entries(STATE_KEYS) as [keyof MainState, string][]) {
    const v = s[k]
    if (v === undefined || v === null) continue
    out[key] = typeof v === 'object' ? JSON.stringify(v) : String(v)
  }
  return out
}

/** Reads what main saved; undefined when main saved nothing (it failed validation or never ran). */
export function decodeState(get: (key: string) => string): MainState | undefined {
  const phase = get(STATE_KEYS.phase) as Phase
  if (!phase) return undefined
  const num = (key: string) => {
    const v = get(key)
    return v === '' ? undefined : Number(v)
  }
  const str = (key: string) => get(key) || undefined
  let connection: ConnectionSettings | undefined
  try {
    connection = get(STATE_KEYS.connection) ? (JSON.parse(get(STATE_KEYS.connection)) as ConnectionSettings) : undefined
  } catch {
    connection = undefined
  }
  return {
    phase,
    resource: str(STATE_KEYS.resource),
    owner: str(STATE_KEYS.owner),
    token: num(STATE_KEYS.token),
    ttlMs: num(STATE_KEYS.ttlMs),
    heartbeatMs: num(STATE_KEYS.heartbeatMs),
    stateDir: str(STATE_KEYS.stateDir),
    heartbeatPid: num(STATE_KEYS.heartbeatPid),
    acquiredAt: str(STATE_KEYS.acquiredAt),
    waitedMs: num(STATE_KEYS.waitedMs),
    credentialsFile: str(STATE_KEYS.credentialsFile),
    connection,
    holder: str(STATE_KEYS.holder),
    runUrl: str(STATE_KEYS.runUrl),
    mainRenewals: num(STATE_KEYS.mainRenewals),
    mainRenewFailures: num(STATE_KEYS.mainRenewFailures),
    slot: num(STATE_KEYS.slot),
    takeover: str(STATE_KEYS.takeover),
    env: json(get(STATE_KEYS.env))
  }
}

function json<T>(text: string): T | undefined {
  if (!text) return undefined
  try {
    return JSON.parse(text) as T
  } catch {
    return undefined
  }
}

// ---- files of the state directory ----

export const FILES = {
  /** Written by main for the daemon: what to renew and how to reach Firestore (no secret in it). */
  heartbeatConfig: 'heartbeat-config.json',
  heartbeatPid: 'heartbeat.pid',
  heartbeatStatus: 'heartbeat.json',
  heartbeatLog: 'heartbeat.log',
  /** The holder's latest deadline (hrtime ns), rewritten by main's own renewals while the daemon starts. */
  handoverDeadline: 'deadline-hr-ns'
} as const

/** performance.now() is per process; process.hrtime (CLOCK_MONOTONIC) is shared by every process. */
export function monotonicToHrNs(ms: number, nowHr: bigint = process.hrtime.bigint(), nowPerf = performance.now()): bigint {
  return nowHr + BigInt(Math.round((ms - nowPerf) * 1e6))
}

export function hrNsToMonotonic(hrNs: bigint, nowHr: bigint = process.hrtime.bigint(), nowPerf = performance.now()): number {
  return nowPerf + Number(hrNs - nowHr) / 1e6
}

export function writeHandoverDeadline(stateDir: string, deadlineMs: number): void {
  const path = join(stateDir, FILES.handoverDeadline)
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, monotonicToHrNs(deadlineMs).toString())
  renameSync(tmp, path)
}

/** The handover deadline on this process's performance.now() scale, if main wrote one. */
export function readHandoverDeadline(stateDir: string): number | undefined {
  try {
    return hrNsToMonotonic(BigInt(readFileSync(join(stateDir, FILES.handoverDeadline), 'utf8').trim()))
  } catch {
    return undefined
  }
}

export interface HeartbeatConfig {
  resource: string
  owner: string
  token: number
  ttlMs: number
  heartbeatMs: number
  maxHoldMs: number
  connection: ConnectionSettings
  stateDir: string
  /**
   * The holder's deadline as process.hrtime (CLOCK_MONOTONIC, shared by every process of the machine),
   * in nanoseconds as a decimal string: performance.now() is per process and cannot cross a spawn.
   */
  deadlineHrNs: string
  /** hrtime (ns) when the lease was acquired: max-hold counts from there. */
  acquiredHrNs: string
}

export interface HeartbeatStatus {
  pid: number
  startedAt: string
  /** The first renewal after start was confirmed: main may finish. */
  ready: boolean
  renewals: number
  failures: number
  lost: boolean
  lostReason?: string
  lastRenewalAt?: string
  expiresAt?: string
  lastError?: string
  /** Set when the daemon exits: why. */
  exitedAt?: string
  exitReason?: string
  /** True when the daemon released the lease itself (max-hold). */
  released?: boolean
}

export function writeJsonAtomic(path: string, data: unknown): void {
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(data, null, 2) + '\n')
  renameSync(tmp, path)
}

export function readJson<T>(path: string): T | undefined {
  if (!existsSync(path)) return undefined
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T
  } catch {
    return undefined
  }
}

export function readHeartbeatStatus(stateDir: string | undefined): HeartbeatStatus | undefined {
  return stateDir ? readJson<HeartbeatStatus>(join(stateDir, FILES.heartbeatStatus)) : undefined
}

export function ensureDir(dir: string, mode = 0o700): string {
  mkdirSync(dir, { recursive: true, mode })
  return dir
}
