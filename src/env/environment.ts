import { hostname } from 'node:os'
import { resolve } from 'node:path'
import { LeaseBusyError, LeasefenceError, ValidationError } from '../core/errors'
import { formatDuration } from '../core/duration'
import type { Lease, LeaseDoc, LeaseStore } from '../core/lease-store'
import { appendAudit } from '../core/operations'
import { validateOwner, validateResource } from '../core/options'
import { slotResource } from '../core/resource-id'
import { acquireSlot, validateSlots } from '../core/slots'
import { isLive } from '../core/time'
import { redactUrl, withSearchPath, writeEnvFile } from './env-file'
import {
  bandPorts,
  DEFAULT_PORT_BASES,
  DEFAULT_PORTS_PER_SLOT,
  formatBands,
  formatPortBases,
  parsePortBases,
  parsePortsPerSlot,
  portEnvName,
  slotPorts,
  validatePortLayout,
  type PortBase,
  type SlotPorts
} from './ports'
import { findListeners, stopListeners, type Listener } from './process-ports'
import { cloneSchema, dropSchema, schemaExists, validateSchemaName, verifyClone, withDatabase, type CloneResult } from './schema-clone'
import { ensureWorktree, removeWorktree, repoTopLevel, validateBaseRef, worktreeLayout, type WorktreeResult } from './worktree'

/**
 * Environment leases: one isolated environment per slot of an N-slot lease. The lease decides who owns
 * slot i (its fencing token stays attached to it); this module provisions what slot i means (a port
 * band, a database schema cloned from a migrated template, a git worktree, an env file) and tears it
 * down again. The CLI (`leasefence env`) and the action only call these three functions.
 *
 * What a slot gets is a pure function of its index and the layout, and the layout is recorded in the
 * lease's holder metadata, so release and reap tear down exactly what acquire provisioned even when
 * they are not given the same flags. Teardown always happens while holding the slot's lease (taken over
 * from an expired holder if need be), so nobody can be handed the slot while it is being cleaned.
 */

export const DEFAULT_ENV_TTL_MS = 2 * 3_600_000
/** How long release/reap hold the slot while they tear down. */
export const TEARDOWN_TTL_MS = 10 * 60_000
export const DEFAULT_SCHEMA_PREFIX = 'agent_'
export const DEFAULT_BASE_REF = 'origin/main'
export const ENV_HOLDER_KIND = 'leasefence-env'

export interface DatabaseSpec {
  /** Admin connection URL (postgres://...). Never recorded anywhere. */
  url: string
  /** The already-migrated template schema (acquire only). */
  template?: string
  /** Copy the template's rows too. Default false. */
  copyData?: boolean
}

export interface WorktreeSpec {
  /** A directory inside the repository (default: cwd). */
  repo?: string
  /** Default origin/main. */
  baseRef?: string
}

export interface EnvironmentLayout {
  portBases?: PortBase[] | string
  portsPerSlot?: number | string
  schemaPrefix?: string
}

export interface EnvironmentSpec extends EnvironmentLayout {
  /** The environment pool's name: slot i is the lease `resource#slot-i`. */
  resource: string
  database?: DatabaseSpec
  worktree?: WorktreeSpec | boolean
}

export type StepName = 'lease' | 'ports' | 'processes' | 'schema' | 'worktree' | 'env-file'

export interface Step {
  step: StepName
  /** What happened: created, kept, dropped, absent, stopped, skipped, released, failed... */
  action: string
  detail: string
}

export type ProgressSink = (step: Step) => void

export interface AcquireEnvironmentOptions extends EnvironmentSpec {
  slots: number
  agentId: string
  /** Lease ttl. The CLI exits after acquiring, so it is long (default 2h): `env release` ends it. */
  ttlMs?: number
  onBusy?: 'fail' | 'wait' | 'skip'
  waitTimeoutMs?: number
  pollMs?: number
  signal?: AbortSignal
  envFile?: string
  /** Stop processes found listening on the slot's ports (leftovers of a crashed holder). Default false: warn. */
  reclaimPorts?: boolean
  /** Extra holder metadata (run URL...). */
  holder?: Record<string, string>
  onStep?: ProgressSink
}

export interface Environment {
  resource: string
  slot: number
  leaseResource: string
  agentId: string
  token: number
  expiresAt: Date
  /** The same agent held this slot live already: its schema and worktree were kept. */
  reused: boolean
  previousOwner?: string
  previousExpired: boolean
  ports: Record<string, number>
  devPort: number
  /** e.g. dev=3010-3019,api=4010-4019 */
  bands: string
  schema?: string
  databaseUrl?: string
  clone?: CloneResult
  worktree?: WorktreeResult
  /** The variables of the env file. */
  env: Record<string, string>
  envFile?: string
  /** Processes listening on the slot's ports when it was acquired (not stopped unless reclaimPorts). */
  portsInUse: Listener[]
  warnings: string[]
  steps: Step[]
}

export type AcquireEnvironmentResult = { acquired: true; environment: Environment } | { acquired: false; busy: string }

interface ResolvedLayout {
  bases: PortBase[]
  portsPerSlot: number
  schemaPrefix: string
}

function resolveLayout(l: EnvironmentLayout): ResolvedLayout {
  const bases = l.portBases === undefined ? DEFAULT_PORT_BASES.map((b) => ({ ...b })) : typeof l.portBases === 'string' ? parsePortBases(l.portBases) : l.portBases
  const portsPerSlot = l.portsPerSlot === undefined ? DEFAULT_PORTS_PER_SLOT : parsePortsPerSlot(l.portsPerSlot)
  const schemaPrefix = l.schemaPrefix ?? DEFAULT_SCHEMA_PREFIX
  if (!/^[a-z_][a-z0-9_]{0,49}$/.test(schemaPrefix)) {
    throw new ValidationError(`schema-prefix: "${schemaPrefix}" is not a safe schema name prefix; use only lower-case letters, digits and _ (not starting with a digit)`)
  }
  return { bases, portsPerSlot, schemaPrefix }
}

function worktreeSpec(w: EnvironmentSpec['worktree']): WorktreeSpec | undefined {
  if (!w) return undefined
  return w === true ? {} : w
}

function validateDatabaseUrl(url: string): void {
  if (typeof url !== 'string' || !/^postgres(ql)?:\/\//i.test(url)) {
    throw new ValidationError('database-url: use a postgres:// or postgresql:// URL')
  }
}

export function schemaName(prefix: string, slot: number): string {
  return validateSchemaName(`${prefix}${slot}`, 'schema')
}

/** What the lease's holder metadata records about the environment (no secrets). */
interface EnvRecord {
  host?: string
  bases?: PortBase[]
  portsPerSlot?: number
  schemaPrefix?: string
  template?: string
  worktreeRepo?: string
}

function recordOf(holder: Record<string, string> | undefined): EnvRecord | undefined {
  if (!holder || holder.kind !== ENV_HOLDER_KIND) return undefined
  const r: EnvRecord = { host: holder.host }
  try {
    if (holder.portBase) r.bases = parsePortBases(holder.portBase)
    if (holder.portsPerSlot) r.portsPerSlot = parsePortsPerSlot(holder.portsPerSlot)
  } catch {
    r.bases = undefined
  }
  if (holder.schemaPrefix && /^[a-z_][a-z0-9_]{0,49}$/.test(holder.schemaPrefix)) r.schemaPrefix = holder.schemaPrefix
  if (holder.template) r.template = holder.template
  if (holder.worktreeRepo) r.worktreeRepo = holder.worktreeRepo
  return r
}

function holderRecord(layout: ResolvedLayout, agentId: string, db: DatabaseSpec | undefined, repoTop: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = {
    ...extra,
    kind: ENV_HOLDER_KIND,
    agent: agentId,
    host: hostname(),
    pid: String(process.pid),
    portBase: formatPortBases(layout.bases),
    portsPerSlot: String(layout.portsPerSlot)
  }
  if (db) {
    h.schemaPrefix = layout.schemaPrefix
    if (db.template) h.template = db.template
    h.database = redactUrl(db.url)
  }
  if (repoTop) h.worktreeRepo = repoTop
  return h
}

function step(steps: Step[], onStep: ProgressSink | undefined, s: StepName, action: string, detail: string): void {
  const st = { step: s, action, detail }
  steps.push(st)
  onStep?.(st)
}

function describeListeners(ls: Listener[]): string {
  return ls.map((l) => `pid ${l.pid} (${l.command}) on ${l.port}`).join(', ')
}

/**
 * Leases a free slot and provisions its environment: ports, schema (cloned from the template), worktree,
 * env file. Everything is validated before anything is written. If provisioning fails, what this call
 * created is removed and the lease released before the error is thrown.
 */
export async function acquireEnvironment(store: LeaseStore, opts: AcquireEnvironmentOptions): Promise<AcquireEnvironmentResult> {
  // --- validation: nothing touched yet
  validateResource(opts.resource)
  validateOwner(opts.agentId)
  const slots = validateSlots(opts.slots)
  const layout = resolveLayout(opts)
  validatePortLayout(layout.bases, layout.portsPerSlot, slots)
  const ttlMs = opts.ttlMs ?? DEFAULT_ENV_TTL_MS
  if (!Number.isFinite(ttlMs) || ttlMs < 1000) throw new ValidationError(`ttl: ${ttlMs}ms is too short for an environment lease; use at least 1s (default 2h)`)
  const db = opts.database
  if (db) {
    validateDatabaseUrl(db.url)
    if (!db.template) throw new ValidationError('template: --database-url needs --template <schema> (the migrated template schema to clone)')
    validateSchemaName(db.template, 'template', { allowPublic: true })
    for (let i = 0; i < slots; i++) {
      if (schemaName(layout.schemaPrefix, i) === db.template) throw new ValidationError(`template: "${db.template}" is the schema of slot ${i}`)
    }
  }
  const wt = worktreeSpec(opts.worktree)
  const baseRef = wt ? validateBaseRef(wt.baseRef ?? DEFAULT_BASE_REF) : undefined
  const repoTop = wt ? await repoTopLevel(wt.repo ?? process.cwd()) : undefined
  const envFile = opts.envFile ? resolve(opts.envFile) : undefined

  const steps: Step[] = []
  const got = await acquireSlot(store, opts.resource, slots, opts.agentId, {
    ttlMs,
    holder: holderRecord(layout, opts.agentId, db, repoTop, opts.holder),
    onBusy: opts.onBusy ?? 'fail',
    waitTimeoutMs: opts.waitTimeoutMs,
    pollMs: opts.pollMs,
    signal: opts.signal
  })
  if (!got.acquired) {
    return {
      acquired: false,
      busy: `all ${slots} slots of "${opts.resource}" are busy: ${got.busy.map((b) => `${b.resource} held by ${b.holder}`).join('; ')}`
    }
  }
  const { slot, lease } = got
  // A slot this agent already held live comes back first: it keeps its environment.
  const reused = got.alreadyHeld
  step(
    steps,
    opts.onStep,
    'lease',
    reused ? 'kept' : 'acquired',
    `slot ${slot} (${lease.resource}) token ${lease.token}, ttl ${formatDuration(ttlMs)}` +
      (lease.previousOwner ? `; taken from ${lease.previousOwner}${lease.previousExpired ? ' (its lease had expired)' : ''}` : '')
  )

  const created: { schema?: string; worktree?: boolean } = {}
  try {
    const env = await provision(opts, { slot, lease, reused, layout, db, repoTop, baseRef, envFile, steps, created })
    return { acquired: true, environment: env }
  } catch (err) {
    // Undo what this call made, give the slot back, and say so.
    const notes: string[] = []
    if (created.schema && db) {
      await withDatabase(db.url, (c) => dropSchema(c, created.schema!)).then(
        () => notes.push(`dropped ${created.schema}`),
        (e) => notes.push(`could not drop ${created.schema}: ${(e as Error).message}`)
      )
    }
    if (created.worktree && repoTop) {
      await removeWorktree(worktreeLayout(repoTop, slot)).then(
        () => notes.push('removed the worktree'),
        (e) => notes.push(`could not remove the worktree: ${(e as Error).message}`)
      )
    }
    const rel = await store.release(lease.resource, opts.agentId, lease.token).catch((e: Error) => ({ released: false, reason: e.message }))
    notes.push(rel.released ? `released slot ${slot}` : `slot ${slot} not released: ${'reason' in rel ? rel.reason : ''}`)
    if (err instanceof Error) err.message = `${err.message} (environment not provisioned: ${notes.join('; ')})`
    throw err
  }
}

async function provision(
  opts: AcquireEnvironmentOptions,
  c: {
    slot: number
    lease: Lease
    reused: boolean
    layout: ResolvedLayout
    db?: DatabaseSpec
    repoTop?: string
    baseRef?: string
    envFile?: string
    steps: Step[]
    created: { schema?: string; worktree?: boolean }
  }
): Promise<Environment> {
  const { slot, lease, reused, layout, db, steps } = c
  const warnings: string[] = []
  const ports = slotPorts(slot, layout.bases, layout.portsPerSlot)
  step(steps, opts.onStep, 'ports', 'assigned', `${Object.entries(ports.ports).map(([n, p]) => `${n}=${p}`).join(' ')} (bands ${formatBands(ports)})`)

  // Listeners on the band: the slot's own (a live re-acquire), or a crashed holder's leftovers.
  let portsInUse: Listener[] = []
  if (!reused) {
    const scan = findListeners(bandPorts(ports))
    portsInUse = scan.listeners
    if (portsInUse.length && opts.reclaimPorts) {
      const stopped = await stopListeners(bandPorts(ports))
      step(steps, opts.onStep, 'processes', 'stopped', stopped.stopped.map((s) => `pid ${s.pid} (${s.command}) on ${s.ports.join(',')}: ${s.outcome}`).join('; '))
      portsInUse = findListeners(bandPorts(ports)).listeners
    }
    if (portsInUse.length) {
      const w = `slot ${slot}'s ports are in use by ${describeListeners(portsInUse)}: leftovers of an earlier holder? Stop them (or acquire with --reclaim-ports)`
      warnings.push(w)
      step(steps, opts.onStep, 'processes', 'in-use', w)
    }
    if (scan.unknown.length) warnings.push(`ports ${scan.unknown.join(', ')} are listened on by processes this user cannot see`)
  }

  let schema: string | undefined
  let databaseUrl: string | undefined
  let clone: CloneResult | undefined
  if (db) {
    schema = schemaName(layout.schemaPrefix, slot)
    const name = schema
    clone = await withDatabase(db.url, async (client) => {
      if (reused && (await schemaExists(client, name))) {
        const v = await verifyClone(client, db.template!, name)
        if (!v.problems.length) {
          step(steps, opts.onStep, 'schema', 'kept', `${name} (this agent already held slot ${slot}; its data is kept)`)
          return undefined
        }
      }
      c.created.schema = name
      const r = await cloneSchema(client, db.template!, name, { copyData: db.copyData })
      step(
        steps,
        opts.onStep,
        'schema',
        'cloned',
        `${name} from ${db.template}: ${r.cloneCounts.tables} tables, ${r.cloneCounts.foreignKeys} foreign keys, ${r.cloneCounts.checks} checks, ${r.cloneCounts.indexes} indexes, ${r.cloneCounts.sequences} sequences (${Math.round(r.ms)}ms)`
      )
      if (r.notCloned.length) {
        warnings.push(`not cloned from ${db.template}: ${r.notCloned.map((o) => `${o.kind} ${o.name}`).join(', ')}`)
      }
      return r
    })
    databaseUrl = withSearchPath(db.url, name)
  }

  let worktree: WorktreeResult | undefined
  if (c.repoTop) {
    const wl = worktreeLayout(c.repoTop, slot)
    c.created.worktree = true
    worktree = await ensureWorktree(wl, c.baseRef!, { reuse: reused })
    if (worktree.action === 'kept') c.created.worktree = false
    step(steps, opts.onStep, 'worktree', worktree.action, `${worktree.path} on ${worktree.branch} at ${worktree.head.slice(0, 12)}`)
  }

  const env: Record<string, string> = {}
  for (const [name, port] of Object.entries(ports.ports)) env[portEnvName(name)] = String(port)
  if (databaseUrl) {
    env.DATABASE_URL = databaseUrl
    env.DB_SCHEMA = schema!
  }
  if (worktree) env.WORKTREE = worktree.path
  env.AGENT_ID = opts.agentId
  env.LEASE_INDEX = String(slot)
  env.LEASEFENCE_FENCING_TOKEN = String(lease.token)
  env.LEASEFENCE_RESOURCE = lease.resource
  env.LEASEFENCE_OWNER = opts.agentId
  env.LEASEFENCE_ENV_RESOURCE = opts.resource

  let envFile: string | undefined
  if (c.envFile) {
    envFile = writeEnvFile(c.envFile, env)
    step(steps, opts.onStep, 'env-file', 'written', envFile)
  }

  return {
    resource: opts.resource,
    slot,
    leaseResource: lease.resource,
    agentId: opts.agentId,
    token: lease.token,
    expiresAt: lease.expiresAt,
    reused,
    previousOwner: lease.previousOwner,
    previousExpired: lease.previousExpired,
    ports: ports.ports,
    devPort: ports.devPort,
    bands: formatBands(ports),
    schema,
    databaseUrl,
    clone,
    worktree,
    env,
    envFile,
    portsInUse,
    warnings,
    steps
  }
}

// ------------------------------------------------------------------------------------------------
// Teardown

export interface TeardownSpec extends EnvironmentLayout {
  database?: DatabaseSpec
  worktree?: WorktreeSpec | boolean
  /** SIGTERM → SIGKILL grace for processes on the slot's ports. Default 5s. */
  killGraceMs?: number
  onStep?: ProgressSink
}

export interface TeardownReport {
  resource: string
  slot: number
  leaseResource: string
  /** released: the lease was given back; held: a step failed and the slot stays held (for TEARDOWN_TTL) */
  lease: 'released' | 'held' | 'absent'
  steps: Step[]
  errors: string[]
}

/** The environment of a slot could not be fully torn down; the slot stays held for a while. */
export class TeardownError extends LeasefenceError {
  readonly report: TeardownReport
  constructor(report: TeardownReport) {
    super(
      'env_teardown_failed',
      `slot ${report.slot} of "${report.resource}" was not fully torn down: ${report.errors.join('; ')}. ` +
        `The slot stays held for ${formatDuration(TEARDOWN_TTL_MS)} so nobody gets it half-cleaned; run the release or reap again after fixing this.`
    )
    this.report = report
  }
}

/**
 * Tears down slot `slot`'s environment: processes on its ports (SIGTERM, then SIGKILL), its schema, its
 * worktree. The layout comes from the lease's record (what acquire provisioned), else from `spec`. Each
 * step tolerates "already gone". Processes and worktree are skipped when the environment was made on
 * another host. Does not touch the lease.
 */
async function teardown(
  slot: number,
  spec: TeardownSpec,
  record: EnvRecord | undefined,
  steps: Step[],
  errors: string[]
): Promise<void> {
  const layout = resolveLayout({
    portBases: record?.bases ?? spec.portBases,
    portsPerSlot: record?.portsPerSlot ?? spec.portsPerSlot,
    schemaPrefix: record?.schemaPrefix ?? spec.schemaPrefix
  })
  const onStep = spec.onStep
  const elsewhere = record?.host && record.host !== hostname() ? record.host : undefined

  // 1. processes on the slot's ports: they may hold the schema and the worktree
  const ports = slotPorts(slot, layout.bases, layout.portsPerSlot)
  if (elsewhere) {
    step(steps, onStep, 'processes', 'skipped', `the environment was made on ${elsewhere}, not here`)
  } else {
    try {
      const r = await stopListeners(bandPorts(ports), { graceMs: spec.killGraceMs })
      if (r.unsupported) step(steps, onStep, 'processes', 'skipped', r.unsupported)
      else if (r.stopped.length === 0) step(steps, onStep, 'processes', 'absent', `nothing listening on ${formatBands(ports)}`)
      else {
        for (const s of r.stopped) {
          const detail = `pid ${s.pid} (${s.command}) on ${s.ports.join(',')}: ${s.outcome}${s.error ? ` (${s.error})` : ''}`
          step(steps, onStep, 'processes', s.outcome === 'failed' ? 'failed' : 'stopped', detail)
          if (s.outcome === 'failed') errors.push(`could not stop ${detail}`)
        }
      }
      if (r.unknown.length) {
        const msg = `ports ${r.unknown.join(', ')} are listened on by processes this user cannot see`
        step(steps, onStep, 'processes', 'failed', msg)
        errors.push(msg)
      }
    } catch (err) {
      errors.push(`stopping processes: ${(err as Error).message}`)
      step(steps, onStep, 'processes', 'failed', (err as Error).message)
    }
  }

  // 2. the schema
  const schema = schemaName(layout.schemaPrefix, slot)
  if (spec.database) {
    try {
      const dropped = await withDatabase(spec.database.url, (c) => dropSchema(c, schema))
      step(steps, onStep, 'schema', dropped ? 'dropped' : 'absent', dropped ? schema : `${schema} already gone`)
    } catch (err) {
      errors.push(`dropping ${schema}: ${(err as Error).message}`)
      step(steps, onStep, 'schema', 'failed', (err as Error).message)
    }
  } else if (record?.schemaPrefix) {
    const msg = `the lease records schema ${schema} but no database URL was given: it is left in place (pass --database-url)`
    step(steps, onStep, 'schema', 'skipped', msg)
    errors.push(msg)
  }

  // 3. the worktree
  const wt = worktreeSpec(spec.worktree)
  let repoTop = record?.worktreeRepo
  if (!repoTop && wt) {
    try {
      repoTop = await repoTopLevel(wt.repo ?? process.cwd())
    } catch (err) {
      errors.push(`worktree: ${(err as Error).message}`)
      step(steps, onStep, 'worktree', 'failed', (err as Error).message)
    }
  }
  if (repoTop) {
    const wl = worktreeLayout(repoTop, slot)
    if (elsewhere) step(steps, onStep, 'worktree', 'skipped', `${wl.path} is on ${elsewhere}, not here`)
    else {
      try {
        const r = await removeWorktree(wl)
        step(steps, onStep, 'worktree', r.action, r.action === 'removed' ? `${r.path} (pruned; branch ${wl.branch} kept)` : `${r.path} already gone (pruned)`)
      } catch (err) {
        errors.push(`removing the worktree: ${(err as Error).message}`)
        step(steps, onStep, 'worktree', 'failed', (err as Error).message)
      }
    }
  }
}

function validateTeardown(spec: TeardownSpec & { resource: string }, slot: number): void {
  validateResource(spec.resource)
  if (!Number.isInteger(slot) || slot < 0 || slot >= 1000) throw new ValidationError(`slot: "${slot}" must be a whole number from 0 to 999`)
  const layout = resolveLayout(spec)
  validatePortLayout(layout.bases, layout.portsPerSlot, slot + 1)
  if (spec.database) validateDatabaseUrl(spec.database.url)
  const wt = worktreeSpec(spec.worktree)
  if (wt?.baseRef) validateBaseRef(wt.baseRef)
}

export interface ReleaseEnvironmentOptions extends TeardownSpec {
  resource: string
  slot: number
  agentId: string
  /** When given, the slot must still carry this token (a newer acquisition's environment is not torn down). */
  token?: number
}

/**
 * The holder gives its environment back: tears it down while still holding the slot, then releases the
 * lease. Refused (LeaseBusyError) when another agent holds the slot live, or when `token` is given and
 * the slot has been acquired again since. A slot whose lease already expired or was released is cleaned
 * too, after taking it back.
 */
export async function releaseEnvironment(store: LeaseStore, opts: ReleaseEnvironmentOptions): Promise<TeardownReport> {
  validateTeardown(opts, opts.slot)
  validateOwner(opts.agentId)
  const res = slotResource(opts.resource, opts.slot)
  const snap = await store.leaseRef(res).get()
  const doc = snap.data() as LeaseDoc | undefined
  const live = isLive(doc, snap.readTime)
  if (doc && live && doc.owner !== opts.agentId) {
    throw new LeaseBusyError(
      `slot ${opts.slot} of "${opts.resource}" is held by ${doc.owner} (token ${doc.fencing}), not ${opts.agentId}: not touching its environment`
    )
  }
  if (doc && live && opts.token !== undefined && doc.fencing !== opts.token) {
    throw new LeaseBusyError(
      `slot ${opts.slot} of "${opts.resource}" now carries token ${doc.fencing}, not ${opts.token}: it was acquired again since; not touching that environment`
    )
  }
  const record = recordOf(doc?.holder)
  const report: TeardownReport = { resource: opts.resource, slot: opts.slot, leaseResource: res, lease: 'absent', steps: [], errors: [] }

  // Hold the slot while tearing down.
  let token: number
  if (doc && live) {
    const r = await store.renew(res, opts.agentId, doc.fencing, TEARDOWN_TTL_MS)
    if (!r.renewed) throw new LeaseBusyError(`slot ${opts.slot} of "${opts.resource}": ${r.reason}`)
    token = doc.fencing
  } else {
    const r = await store.acquire(res, opts.agentId, { ttlMs: TEARDOWN_TTL_MS, holder: { ...(doc?.holder ?? {}), releasing: opts.agentId } })
    if (!r.acquired) throw new LeaseBusyError(`slot ${opts.slot} of "${opts.resource}" was just taken by ${r.holder}: not touching its environment`)
    token = r.lease.token
  }
  step(report.steps, opts.onStep, 'lease', 'holding', `slot ${opts.slot} token ${token} while tearing down`)

  await teardown(opts.slot, opts, record, report.steps, report.errors)
  if (report.errors.length) {
    report.lease = 'held'
    throw new TeardownError(report)
  }
  const rel = await store.release(res, opts.agentId, token)
  report.lease = rel.released ? 'released' : 'absent'
  step(report.steps, opts.onStep, 'lease', rel.released ? 'released' : 'skipped', rel.released ? `token ${token}` : rel.reason)
  return report
}

export interface ReapEnvironmentsOptions extends TeardownSpec {
  resource: string
  /** How many slots the pool has (slots 0..slots-1 are looked at); default: every slot lease of the resource found. */
  slots?: number
  /** Only this slot; refused with LeaseBusyError when it is held live. */
  slot?: number
  /** Only slots whose lease expired without a release (crashed holders); default: every slot not held live. */
  expiredOnly?: boolean
  actor: string
}

export interface ReapedSlot {
  slot: number
  leaseResource: string
  outcome: 'reaped' | 'live' | 'unused' | 'released' | 'failed'
  /** The holder whose environment this was. */
  previousOwner?: string
  detail: string
  report?: TeardownReport
}

/**
 * Tears down the environments of slots nobody holds: each is taken over (as `reap:<actor>`), torn down
 * and released, with an `env_reap` audit record. A slot held live is never touched (with `slot`: refused).
 */
export async function reapEnvironments(store: LeaseStore, opts: ReapEnvironmentsOptions): Promise<ReapedSlot[]> {
  validateResource(opts.resource)
  const slots = opts.slots === undefined ? undefined : validateSlots(opts.slots)
  if (opts.slot !== undefined && (!Number.isInteger(opts.slot) || opts.slot < 0 || opts.slot >= (slots ?? 1000))) {
    throw new ValidationError(`slot: ${opts.slot} is not one of the slots (0-${(slots ?? 1000) - 1})`)
  }
  if (!opts.actor?.trim()) throw new ValidationError('actor: say who reaps')
  const which =
    opts.slot !== undefined
      ? [opts.slot]
      : slots !== undefined
        ? Array.from({ length: slots }, (_, i) => i)
        : await discoverSlots(store, opts.resource)
  validateTeardown(opts, Math.max(0, ...which))
  const reaper = `reap:${opts.actor}`
  const out: ReapedSlot[] = []
  for (const i of which) {
    const res = slotResource(opts.resource, i)
    const snap = await store.leaseRef(res).get()
    const doc = snap.data() as LeaseDoc | undefined
    if (!doc) {
      out.push({ slot: i, leaseResource: res, outcome: 'unused', detail: 'never leased' })
      continue
    }
    const live = isLive(doc, snap.readTime)
    if (live) {
      const detail = `held by ${doc.owner} (token ${doc.fencing}) for ${formatDuration(doc.expiresAt.toMillis() - snap.readTime.toMillis())} more`
      if (opts.slot !== undefined) {
        throw new LeaseBusyError(
          `slot ${i} of "${opts.resource}" is ${detail}: a live environment is never reaped (its holder runs \`leasefence env release\`, or wait until it expires)`
        )
      }
      out.push({ slot: i, leaseResource: res, outcome: 'live', previousOwner: doc.owner, detail })
      continue
    }
    if (opts.expiredOnly && doc.releasedAt) {
      out.push({ slot: i, leaseResource: res, outcome: 'released', previousOwner: doc.owner, detail: 'released cleanly (--expired-only)' })
      continue
    }
    const record = recordOf(doc.holder)
    const previousOwner = doc.holder?.kind === ENV_HOLDER_KIND ? doc.holder.agent ?? doc.owner : doc.owner
    const got = await store.acquire(res, reaper, { ttlMs: TEARDOWN_TTL_MS, holder: { ...(doc.holder ?? {}), reapedBy: opts.actor } })
    if (!got.acquired) {
      if (opts.slot !== undefined) throw new LeaseBusyError(`slot ${i} of "${opts.resource}" was just taken by ${got.holder}: not reaping it`)
      out.push({ slot: i, leaseResource: res, outcome: 'live', previousOwner: got.holder, detail: `just taken by ${got.holder}` })
      continue
    }
    const report: TeardownReport = { resource: opts.resource, slot: i, leaseResource: res, lease: 'held', steps: [], errors: [] }
    step(report.steps, opts.onStep, 'lease', 'holding', `slot ${i} token ${got.lease.token} (taken from ${doc.owner}) while tearing down`)
    await teardown(i, opts, record, report.steps, report.errors)
    await appendAudit(store, res, {
      action: 'env_reap',
      actor: opts.actor,
      previousOwner: doc.owner,
      fencing: got.lease.token,
      steps: report.steps.map((s) => `${s.step}: ${s.action}: ${s.detail}`),
      errors: report.errors
    }).catch(() => undefined)
    if (report.errors.length) {
      out.push({ slot: i, leaseResource: res, outcome: 'failed', previousOwner, detail: report.errors.join('; '), report })
      continue
    }
    const rel = await store.release(res, reaper, got.lease.token)
    report.lease = rel.released ? 'released' : 'absent'
    step(report.steps, opts.onStep, 'lease', rel.released ? 'released' : 'skipped', rel.released ? `token ${got.lease.token}` : rel.reason)
    out.push({ slot: i, leaseResource: res, outcome: 'reaped', previousOwner, detail: `environment of ${previousOwner} torn down`, report })
  }
  return out
}

/** The slot indices that have a lease document (`resource#slot-i`), ascending. */
export async function discoverSlots(store: LeaseStore, resource: string): Promise<number[]> {
  const prefix = slotResource(resource, 0).replace(/0$/, '')
  const q = await store.db.collection(store.collection).where('resource', '>=', prefix).where('resource', '<', `${prefix}\uf8ff`).get()
  const out = new Set<number>()
  for (const d of q.docs) {
    const r = String(d.get('resource') ?? '')
    const m = /^(\d+)$/.exec(r.slice(prefix.length))
    if (r.startsWith(prefix) && m) out.add(Number(m[1]))
  }
  return [...out].sort((a, b) => a - b)
}

export interface RenewEnvironmentOptions {
  resource: string
  slot: number
  agentId: string
  ttlMs?: number
}

/** Extends the slot's lease by ttl (default 2h) while this agent still holds it. */
export async function renewEnvironment(store: LeaseStore, opts: RenewEnvironmentOptions): Promise<{ token: number; expiresAt: Date }> {
  validateResource(opts.resource)
  validateOwner(opts.agentId)
  const res = slotResource(opts.resource, opts.slot)
  const s = await store.status(res)
  if (!s.exists || !s.live || s.owner !== opts.agentId) {
    throw new LeaseBusyError(
      `slot ${opts.slot} of "${opts.resource}" is not held by ${opts.agentId}` + (s.exists ? ` (${s.live ? `held by ${s.owner}` : 'expired or released'})` : ' (never leased)')
    )
  }
  const r = await store.renew(res, opts.agentId, s.token, opts.ttlMs ?? DEFAULT_ENV_TTL_MS)
  if (!r.renewed) throw new LeaseBusyError(`slot ${opts.slot} of "${opts.resource}": ${r.reason}`)
  return { token: s.token, expiresAt: r.expiresAt }
}

/** The ports of a slot (for `env ready` and others that need no lease). */
export function environmentPorts(slot: number, layout: EnvironmentLayout = {}): SlotPorts {
  const l = resolveLayout(layout)
  validatePortLayout(l.bases, l.portsPerSlot, slot + 1)
  return slotPorts(slot, l.bases, l.portsPerSlot)
}
