import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as core from '@actions/core'
import { describeBusy, type BusyInfo } from '../core/acquire'
import { acquireLease, type AcquisitionOutcome } from '../core/acquisition'
import { planAcquire } from '../core/dry-run'
import { DISABLED_BANNER, runMode, type RunMode } from '../core/modes'
import { forceRelease } from '../core/operations'
import { slotResource } from '../core/resource-id'
import { slotEnvLines, slotValues } from '../core/slots'
import { acquireEnvMode, envOutputs } from './environment'
import type { ConnectionSettings } from '../core/connection'
import { formatDuration } from '../core/duration'
import { LeasefenceError, ValidationError, WaitTimeoutError } from '../core/errors'
import { Heartbeat } from '../core/heartbeat'
import { LeaseStore, type Lease } from '../core/lease-store'
import { STATE_DIR_ENV } from '../core/local-state'
import { logEvent, setLogSink } from '../core/log'
import { connectionEnv } from '../cli/settings'
import { distDir, isRunning, stopProcess, writeCliWrapper } from './files'
import { holderMetadata, parseInputs, type ActionInputs } from './inputs'
import {
  encodeState,
  ensureDir,
  FILES,
  monotonicToHrNs,
  readHeartbeatStatus,
  writeHandoverDeadline,
  type HeartbeatConfig,
  type MainState
} from './state'

/** How long main waits for the daemon's first confirmed renewal before it gives the lease back. */
const DAEMON_READY_MAX_MS = 20_000

function save(s: Partial<MainState>): void {
  for (const [k, v] of Object.entries(encodeState(s))) core.saveState(k, v)
}

/**
 * The main step: validate, acquire with the on-busy policy, hand the lease to later steps (env, PATH)
 * and to a detached heartbeat, and finish.
 */
export async function runMain(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  setLogSink(core.info)
  let inputs: ActionInputs
  try {
    inputs = parseInputs(env)
  } catch (err) {
    if (err instanceof ValidationError) {
      core.setFailed(`leasefence: ${err.message}`)
      return
    }
    throw err
  }
  if (inputs.credentialsJson) {
    core.setSecret(inputs.credentialsJson)
    for (const s of inputs.credentials?.secrets ?? []) core.setSecret(s)
  }
  if (inputs.githubToken) core.setSecret(inputs.githubToken)
  if (inputs.env?.databaseUrl) {
    core.setSecret(inputs.env.databaseUrl)
    try {
      const pw = decodeURIComponent(new URL(inputs.env.databaseUrl).password)
      if (pw) core.setSecret(pw)
    } catch {
      // validated as postgres:// already; an unparsable password is masked as part of the whole URL
    }
  }
  let mode: RunMode
  try {
    mode = runMode(env, inputs.dryRun ? 'true' : '')
  } catch (err) {
    core.setFailed(`leasefence: ${(err as Error).message}`)
    return
  }
  const { resource, owner } = inputs
  core.setOutput('resource', resource)
  core.setOutput('owner', owner)
  core.setOutput('acquired', 'false')
  core.setOutput('mode', mode)
  if (mode === 'disabled') return runDisabled(inputs)

  const base = mkdtempSync(join(env.RUNNER_TEMP || tmpdir(), 'leasefence-'))
  const stateDir = ensureDir(join(base, 'state'))
  let credentialsFile: string | undefined
  if (inputs.credentialsJson) {
    credentialsFile = join(ensureDir(join(base, 'credentials')), 'credentials.json')
    writeFileSync(credentialsFile, inputs.credentialsJson, { mode: 0o600 })
  }
  const connection: ConnectionSettings = {
    projectId: inputs.projectId,
    database: inputs.database,
    collection: inputs.collection,
    gateCollection: inputs.gateCollection,
    keyFilename: credentialsFile
  }
  // From here on post has something to clean up, whatever happens next.
  save({ phase: 'prepared', resource, owner, stateDir, credentialsFile, connection })

  const store = new LeaseStore(connection)
  const cancel = new AbortController()
  const onSignal = (sig: NodeJS.Signals) => {
    core.info(`leasefence: ${sig} received; no longer waiting for the lease`)
    cancel.abort()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  let lastBusy: BusyInfo | undefined
  const handOverContext = { stateDir, base, connection, credentialsFile, cancelled: cancel.signal }
  try {
    if (inputs.forceRelease) return await runForceRelease(inputs, store)
    if (mode === 'dry-run') return await runDryRun(inputs, store, base, stateDir, connection)
    if (inputs.env) {
      const env = inputs.env
      const got = await acquireEnvMode(store, { ...inputs, env }, holderMetadata(inputs.context), cancel.signal)
      if (!got.acquired) {
        save({ phase: 'skipped' })
        logEvent('lock_busy', { resource, detail: got.busy })
        if (inputs.onBusy === 'fail') core.setFailed(`leasefence: ${got.busy}; on-busy is fail`)
        else core.notice(`Skipped: ${got.busy}.`, { title: 'leasefence: lease busy' })
        return
      }
      save({ env: { resource, worktree: env.worktree, keep: env.keep, database: !!env.databaseUrl }, slot: got.environment.slot })
      await handOver({ ...inputs, resource: got.lease.resource }, store, got.lease, got.waitedMs, {
        ...handOverContext,
        onHandedOver: () => {
          for (const [k, v] of Object.entries(envOutputs(got.environment))) core.setOutput(k, v)
          if (got.lease.previousOwner) core.setOutput('took-over-from', got.lease.previousOwner)
          core.setOutput('previous-expired', String(got.lease.previousExpired))
        }
      })
      return
    }
    const policy = inputs.onBusy
    core.info(
      `leasefence: acquiring "${resource}" as ${owner} (ttl ${formatDuration(inputs.ttlMs)}, heartbeat every ` +
        `${formatDuration(inputs.heartbeatMs)}, on-busy ${policy}${policy === 'wait' ? ` up to ${formatDuration(inputs.waitTimeoutMs)}` : ''})`
    )
    const got = await acquireLease(store, {
      resource,
      owner,
      ttlMs: inputs.ttlMs,
      holder: holderMetadata(inputs.context),
      // fail is decided here, so that the holder can be named in the outputs too.
      onBusy: policy === 'fail' ? 'skip' : policy,
      queue: inputs.queue,
      waitTimeoutMs: inputs.waitTimeoutMs,
      signal: cancel.signal,
      slots: inputs.slots,
      liveness: inputs.githubToken ? { token: inputs.githubToken, apiUrl: env.GITHUB_API_URL || undefined } : undefined,
      stuckThreshold: inputs.stuckThreshold,
      maxHoldMs: inputs.maxHoldMs,
      skipper: inputs.context.runUrl || owner,
      onWaiting: (busy, waited, position) => {
        lastBusy = busy
        const where = position !== undefined && position > 0 ? `, ${position} ahead in the queue` : ''
        const left = formatDuration(Math.max(0, inputs.waitTimeoutMs - waited))
        logEvent('lock_waiting', { resource, holder: busy.holder, token: busy.token, position, waitedMs: Math.round(waited) })
        core.info(`leasefence: waiting${waited > 0 ? ` (${formatDuration(waited)} so far, ${left} left${where})` : ''}: ${describeBusy(busy)}`)
      }
    })
    if (!got.acquired) {
      const busy = got.busy
      core.setOutput('holder', busy.holder)
      save({ phase: 'skipped', holder: busy.holder })
      logEvent('lock_busy', { resource, holder: busy.holder, token: busy.token, skipCount: got.skip?.skipCount })
      reportStuck(resource, got)
      if (got.supersededBy) {
        core.setOutput('superseded', 'true')
        core.notice(
          `Superseded: a newer run (${got.supersededBy}) is waiting for "${resource}" with on-busy: supersede; this run stops waiting without the lease.`,
          { title: 'leasefence: superseded' }
        )
        return
      }
      if (policy === 'fail') {
        core.setFailed(`leasefence: ${describeBusy(busy)}; on-busy is fail (use on-busy: wait to queue, or skip to go on without it)`)
      } else {
        core.notice(`Skipped: ${describeBusy(busy)}. Later steps should check steps.<id>.outputs.acquired.`, {
          title: 'leasefence: lease busy'
        })
      }
      return
    }
    await handOver({ ...inputs, resource: got.lease.resource }, store, got.lease, got.waitedMs, {
      ...handOverContext,
      onHandedOver: () => reportAcquired(inputs, got)
    })
  } catch (err) {
    if (err instanceof WaitTimeoutError && lastBusy) core.setOutput('holder', lastBusy.holder)
    save({ phase: 'failed' })
    core.setFailed(`leasefence: ${err instanceof LeasefenceError ? err.message : err instanceof Error ? err.stack ?? err.message : String(err)}`)
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await store.close().catch(() => undefined)
  }
}

interface HandOverContext {
  stateDir: string
  base: string
  connection: ConnectionSettings
  credentialsFile?: string
  cancelled: AbortSignal
  /** Called once the lease is handed to later steps (outputs, notes). */
  onHandedOver?: () => void
}

async function handOver(inputs: ActionInputs, store: LeaseStore, lease: Lease, waitedMs: number, c: HandOverContext): Promise<void> {
  const { resource, owner } = inputs
  const token = lease.token
  const acquiredHrNs = process.hrtime.bigint()
  logEvent('acquire_lock', {
    resource,
    owner,
    token,
    waitedMs: Math.round(waitedMs),
    previousOwner: lease.previousOwner,
    previousExpired: lease.previousOwner ? lease.previousExpired : undefined
  })
  save({
    phase: 'acquired',
    resource,
    token,
    ttlMs: inputs.ttlMs,
    heartbeatMs: inputs.heartbeatMs,
    acquiredAt: lease.acquiredAt.toISOString(),
    waitedMs: Math.round(waitedMs),
    runUrl: inputs.context.runUrl || undefined
  })
  // Until the daemon has confirmed the lease itself, main renews it: a daemon slow to start (a loaded
  // runner, a short ttl) must not cost the lease. Its latest deadline is handed over through a file.
  writeHandoverDeadline(c.stateDir, lease.deadline)
  const interim = new Heartbeat(store, lease, {
    intervalMs: inputs.heartbeatMs,
    onRenew: (r) => writeHandoverDeadline(c.stateDir, r.deadline),
    onError: (err, n) => logEvent('renew_failed', { resource, token, failures: n, error: (err as Error).message })
  }).start()
  const stopInterim = async () => {
    await interim.stop()
    save({ mainRenewals: interim.stats.renewals, mainRenewFailures: interim.stats.failures })
  }
  try {
    await startDaemon(inputs, store, lease, waitedMs, c, interim, acquiredHrNs)
  } finally {
    await stopInterim()
  }
}

async function startDaemon(
  inputs: ActionInputs,
  store: LeaseStore,
  lease: Lease,
  waitedMs: number,
  c: HandOverContext,
  interim: Heartbeat,
  acquiredHrNs: bigint
): Promise<void> {
  const { resource, owner } = inputs
  const token = lease.token
  const giveBack = async (why: string) => {
    await interim.stop()
    const r = await store.release(resource, owner, token).catch((err: Error) => ({ released: false as const, reason: err.message }))
    save({ phase: 'failed' })
    core.setFailed(`leasefence: ${why}; ${r.released ? 'the lease was released' : `the lease could not be released (${r.reason}); it expires by its ttl`}`)
  }
  if (c.cancelled.aborted) return giveBack('the job was cancelled while acquiring')

  const dist = distDir()

  // The heartbeat: detached, stdio ignored and unref'd, so that this step ends now and the runner does
  // not wait for (or kill) it at the end of the step. Post stops it; the job's end is the backstop.
  const config: HeartbeatConfig = {
    resource,
    owner,
    token,
    ttlMs: inputs.ttlMs,
    heartbeatMs: inputs.heartbeatMs,
    maxHoldMs: inputs.maxHoldMs,
    connection: c.connection,
    stateDir: c.stateDir,
    deadlineHrNs: monotonicToHrNs(lease.deadline).toString(),
    acquiredHrNs: acquiredHrNs.toString()
  }
  const configPath = join(c.stateDir, FILES.heartbeatConfig)
  writeFileSync(configPath, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 })
  const daemonEnv: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('INPUT_')) daemonEnv[k] = v
  const child = spawn(process.execPath, [join(dist, 'heartbeat.js'), configPath], {
    detached: true,
    stdio: 'ignore',
    cwd: c.stateDir,
    env: daemonEnv
  })
  let spawnError: Error | undefined
  child.on('error', (err) => (spawnError = err))
  child.unref()
  const pid = child.pid
  if (!pid) return giveBack(`the heartbeat process could not be started (${spawnError?.message ?? 'no pid'})`)
  writeFileSync(join(c.stateDir, FILES.heartbeatPid), `${pid}\n`)
  save({ heartbeatPid: pid })

  // Wait for its first confirmed renewal (well under a second), so a daemon that cannot run fails here.
  const until = Date.now() + DAEMON_READY_MAX_MS
  for (;;) {
    if (interim.lost) {
      await stopProcess(pid, 'heartbeat', 2000)
      return giveBack(`the lease was lost while the heartbeat started: ${interim.stats.lostReason}`)
    }
    const status = readHeartbeatStatus(c.stateDir)
    if (status?.lost) return giveBack(`the heartbeat lost the lease at once: ${status.lostReason}`)
    if (status?.ready) break
    if (!isRunning(pid) || spawnError) {
      return giveBack(`the heartbeat process exited before its first renewal${logTail(c.stateDir)}`)
    }
    if (Date.now() > until || c.cancelled.aborted) {
      await stopProcess(pid, 'heartbeat', 2000)
      return giveBack(`${c.cancelled.aborted ? 'the job was cancelled' : 'the heartbeat did not confirm the lease in time'}${logTail(c.stateDir)}`)
    }
    await new Promise((r) => setTimeout(r, 20))
  }

  // Later steps: the lease's identity, the connection and the state directory, then the CLI on PATH.
  const exported: Record<string, string> = {
    LEASEFENCE_RESOURCE: resource,
    LEASEFENCE_OWNER: owner,
    LEASEFENCE_FENCING_TOKEN: String(token),
    [STATE_DIR_ENV]: c.stateDir,
    ...connectionEnv(c.connection)
  }
  for (const [k, v] of Object.entries(exported)) core.exportVariable(k, v)
  putCliOnPath(c.base)
  core.setOutput('acquired', 'true')
  core.setOutput('fencing-token', String(token))
  c.onHandedOver?.()
  const took = lease.previousOwner
    ? lease.previousExpired
      ? `; took over from ${lease.previousOwner}, whose lease had expired without a release`
      : `; previous holder ${lease.previousOwner} had released it`
    : ''
  core.info(
    `leasefence: acquired "${resource}" with fencing token ${token}${waitedMs > 0 ? ` after waiting ${formatDuration(waitedMs)}` : ''}${took}. ` +
      `Heartbeat pid ${pid} renews every ${formatDuration(inputs.heartbeatMs)}. Publish with \`leasefence publish -- <cmd>\` ` +
      'or the leasefence/publish sub-action.'
  )
}

function logTail(stateDir: string): string {
  try {
    const lines = readFileSync(join(stateDir, FILES.heartbeatLog), 'utf8').trim().split('\n').slice(-5)
    return lines.length && lines[0] ? `; its log ends:\n${lines.join('\n')}` : ''
  } catch {
    return ''
  }
}

/** Outputs and notes of an acquisition beyond the token: slot values, who it was taken from. */
function reportAcquired(inputs: ActionInputs, got: Extract<AcquisitionOutcome, { acquired: true }>): void {
  const lease = got.lease
  if (lease.previousOwner) {
    core.setOutput('took-over-from', lease.previousOwner)
    core.setOutput('previous-expired', String(lease.previousExpired))
  } else core.setOutput('previous-expired', 'false')
  let takeover: string | undefined
  if (got.takeover) {
    takeover = `from ${got.takeover.from} (token ${got.takeover.token}) before its lease expired: ${got.takeover.detail}`
    core.notice(`Took over "${inputs.resource}" ${takeover}.`, { title: 'leasefence: stale holder taken over' })
  } else if (lease.previousOwner && lease.previousExpired) {
    takeover = `from ${lease.previousOwner}, whose lease had expired without a release`
  }
  if (inputs.slotted) {
    const slot = got.slot ?? 0
    const v = slotValues(slot, inputs.layout)
    core.setOutput('slot', String(slot))
    core.setOutput('port', String(v.port))
    core.setOutput('schema', v.schema)
    if (inputs.envFile) writeFileSync(inputs.envFile, slotEnvLines(v, lease.token))
    core.info(`leasefence: slot ${slot} of ${inputs.slots}: port ${v.port}, schema ${v.schema}${inputs.envFile ? `, written to ${inputs.envFile}` : ''}`)
  }
  save({ slot: inputs.slotted ? got.slot ?? 0 : undefined, takeover })
}

function reportStuck(resource: string, got: Extract<AcquisitionOutcome, { acquired: false }>): void {
  if (!got.stuck) return
  core.setOutput('stuck', 'true')
  const s = got.stuck
  core.warning(
    `The lock on "${resource}" looks stuck: ${s.holder} (token ${s.token}) has held it for ${formatDuration(s.heldMs)} and ` +
      `${s.skipCount} runs have skipped behind it (${s.why}). If its run is gone, release it: ` +
      `leasefence release --force --reason "..." ${resource}`,
    { title: 'leasefence: lock stuck' }
  )
}

/** LEASEFENCE_DISABLED: no lease, no Firestore; said loudly, and later steps run unfenced. */
function runDisabled(inputs: ActionInputs): void {
  core.warning(`${DISABLED_BANNER} Resource "${inputs.resource}" is not locked in this job.`, { title: 'leasefence: DISABLED' })
  core.setOutput('acquired', 'true')
  core.setOutput('fencing-token', '0')
  core.exportVariable('LEASEFENCE_DISABLED', '1')
  putCliOnPath(mkdtempSync(join(process.env.RUNNER_TEMP || tmpdir(), 'leasefence-')))
  save({ phase: 'disabled', resource: inputs.resource })
}

/** Operator control: expire the lease whoever holds it, audited; this job holds nothing afterwards. */
async function runForceRelease(inputs: ActionInputs, store: LeaseStore): Promise<void> {
  const actor = [inputs.context.actor || 'unknown actor', inputs.context.runUrl].filter(Boolean).join(' via ')
  const r = await forceRelease(store, inputs.resource, { reason: inputs.reason, actor })
  logEvent('force_release_lock', { resource: inputs.resource, previousOwner: r.previousOwner, token: r.token, wasLive: r.wasLive, reason: inputs.reason, actor })
  save({ phase: 'forced' })
  if (r.previousOwner) core.setOutput('took-over-from', r.previousOwner)
  core.notice(
    r.released
      ? `Force-released "${inputs.resource}": ${r.reason} (token ${r.token} kept; the next holder gets ${r.token + 1}). Reason: ${inputs.reason}. Audited as ${actor}.`
      : `Nothing to force-release on "${inputs.resource}": ${r.reason}.`,
    { title: 'leasefence: force release' }
  )
}

/** dry-run: reads only; says what would happen and lets the job go on as if acquired. */
async function runDryRun(inputs: ActionInputs, store: LeaseStore, base: string, stateDir: string, connection: ConnectionSettings): Promise<void> {
  const target = inputs.slotted ? slotResource(inputs.resource, 0) : inputs.resource
  const plan = await planAcquire(store, target, inputs.owner)
  core.notice(plan.message, { title: 'leasefence: dry run' })
  core.setOutput('acquired', 'true')
  core.setOutput('fencing-token', String(plan.token))
  if (!plan.wouldAcquire && plan.holder) core.setOutput('holder', plan.holder)
  const exported: Record<string, string> = {
    LEASEFENCE_DRY_RUN: '1',
    LEASEFENCE_RESOURCE: target,
    LEASEFENCE_OWNER: inputs.owner,
    LEASEFENCE_FENCING_TOKEN: String(plan.token),
    [STATE_DIR_ENV]: stateDir,
    ...connectionEnv(connection)
  }
  for (const [k, v] of Object.entries(exported)) core.exportVariable(k, v)
  putCliOnPath(base)
  save({ phase: 'dry-run', resource: target })
}

function putCliOnPath(base: string): void {
  const binDir = join(base, 'bin')
  writeCliWrapper(binDir, process.execPath, join(distDir(), 'cli.js'))
  core.addPath(binDir)
}
