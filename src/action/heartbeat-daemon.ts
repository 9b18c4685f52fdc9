import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Heartbeat } from '../core/heartbeat'
import { LeaseStore } from '../core/lease-store'
import { writeLostMarker } from '../core/local-state'
import { appendAudit } from '../core/operations'
import { logEvent, setLogSink } from '../core/log'
import { formatDuration } from '../core/duration'
import { withTimeout } from '../core/time'
import { FILES, hrNsToMonotonic, readHandoverDeadline, writeJsonAtomic, type HeartbeatConfig, type HeartbeatStatus } from './state'

/**
 * The heartbeat daemon: a detached process started by main (stdio ignored, so the runner does not wait
 * for it at the end of the step), stopped by post with SIGTERM. It keeps the lease alive with core's
 * Heartbeat and records what happened in the state directory:
 *   heartbeat.json  status (ready, renewals, failures, lost), rewritten atomically on every change
 *   heartbeat.log   one line per event
 *   lost            the lost marker (core/local-state) that makes every later publish refuse at once
 * It exits by itself when the lease is lost, or when max-hold has passed (then it releases the lease).
 */

export async function runHeartbeatDaemon(configPath: string | undefined): Promise<void> {
  if (!configPath) throw new Error('leasefence heartbeat: the config file path is missing (argv[2])')
  const cfg = JSON.parse(readFileSync(configPath, 'utf8')) as HeartbeatConfig
  const dir = cfg.stateDir
  const logPath = join(dir, FILES.heartbeatLog)
  const log = (line: string) => {
    try {
      appendFileSync(logPath, `${new Date().toISOString()} ${line}\n`)
    } catch {
      /* the log is best effort */
    }
  }
  setLogSink(log)
  process.on('uncaughtException', (err) => {
    log(`heartbeat crashed: ${err.stack ?? err.message}`)
    process.exit(70)
  })
  process.on('unhandledRejection', (err) => {
    log(`heartbeat crashed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`)
    process.exit(70)
  })
  writeFileSync(join(dir, FILES.heartbeatPid), `${process.pid}\n`)

  const status: HeartbeatStatus = { pid: process.pid, startedAt: new Date().toISOString(), ready: false, renewals: 0, failures: 0, lost: false }
  const save = () => {
    try {
      writeJsonAtomic(join(dir, FILES.heartbeatStatus), status)
    } catch (err) {
      log(`could not write the status file: ${(err as Error).message}`)
    }
  }
  save()

  const { resource, owner, token, ttlMs } = cfg
  const store = new LeaseStore(cfg.connection)
  let hb: Heartbeat | undefined
  let exiting = false
  let maxHoldTimer: NodeJS.Timeout | undefined

  const exit = async (reason: string, code: number): Promise<never> => {
    if (!exiting) {
      exiting = true
      clearTimeout(maxHoldTimer)
      await hb?.stop().catch(() => undefined)
      status.exitedAt = new Date().toISOString()
      status.exitReason = reason
      save()
      log(`heartbeat exiting: ${reason}`)
      await withTimeout(store.close(), 2000, 'close').catch(() => undefined)
      process.exit(code)
    }
    return new Promise<never>(() => undefined)
  }

  const onLost = (reason: string) => {
    status.lost = true
    status.lostReason = reason
    save()
    writeLostMarker(dir, { reason, at: new Date().toISOString(), token })
    logEvent('lock_lost', { resource, owner, token, reason })
    // The audit trail records losses too (best effort, bounded: the marker above is what counts).
    void withTimeout(appendAudit(store, resource, { action: 'lost', owner, fencing: token, reason }), 2000, 'audit')
      .catch(() => undefined)
      .then(() => exit(`lease lost: ${reason}`, 0))
  }

  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => void exit(`stopped by ${sig}`, 0))
  process.on('SIGHUP', () => log('ignored SIGHUP'))

  // Main renews by itself until this process reports ready, and leaves its latest deadline in a file.
  let deadline = Math.max(hrNsToMonotonic(BigInt(cfg.deadlineHrNs)), readHandoverDeadline(dir) ?? -Infinity)
  const heldForMs = performance.now() - hrNsToMonotonic(BigInt(cfg.acquiredHrNs))
  log(
    `heartbeat started: resource=${JSON.stringify(resource)} token=${token} ttl=${formatDuration(ttlMs)} ` +
      `every=${formatDuration(cfg.heartbeatMs)} deadline in ${formatDuration(deadline - performance.now())}`
  )

  // max-hold: the backstop when no post step ever comes (a runner that died, a local experiment).
  maxHoldTimer = setTimeout(async () => {
    const reason = `the heartbeat stopped after max-hold (${formatDuration(cfg.maxHoldMs)}) and released the lease`
    await hb?.stop()
    writeLostMarker(dir, { reason, at: new Date().toISOString(), token })
    status.lost = true
    status.lostReason = reason
    try {
      const r = await store.release(resource, owner, token)
      status.released = r.released
      logEvent(r.released ? 'release_lock' : 'release_skipped', { resource, token, reason: r.released ? 'max-hold' : r.reason })
    } catch (err) {
      log(`release after max-hold failed: ${(err as Error).message}`)
    }
    await exit(reason, 0)
  }, Math.max(0, cfg.maxHoldMs - heldForMs))

  // Confirm the lease at once rather than one interval after start: the process start (~0.5 s) would
  // otherwise eat into the ttl, and main waits for this first renewal before it finishes.
  let first: Awaited<ReturnType<LeaseStore['renew']>> | undefined
  deadline = Math.max(deadline, readHandoverDeadline(dir) ?? -Infinity)
  if (performance.now() < deadline) {
    try {
      first = await store.renew(resource, owner, token, ttlMs)
    } catch (err) {
      status.failures++
      status.lastError = (err as Error).message
      logEvent('renew_failed', { resource, token, failures: status.failures, error: status.lastError })
    }
  }
  if (exiting) return
  if (first && !first.renewed) return onLost(first.reason)
  deadline = Math.max(deadline, readHandoverDeadline(dir) ?? -Infinity)
  if (!first && performance.now() >= deadline) return onLost(`no renewal was confirmed within the ttl (${ttlMs}ms)`)
  let currentDeadline = deadline
  if (first?.renewed) {
    currentDeadline = Math.max(deadline, first.deadline)
    status.renewals++
    status.lastRenewalAt = new Date().toISOString()
    status.expiresAt = first.expiresAt.toISOString()
    logEvent('renew_lock', { resource, token, expiresAt: first.expiresAt, count: status.renewals })
  }
  status.ready = true
  save()

  hb = new Heartbeat(store, { resource, owner, token, ttlMs, deadline: currentDeadline }, {
    intervalMs: cfg.heartbeatMs,
    onRenew: (r) => {
      status.renewals++
      status.lastRenewalAt = new Date().toISOString()
      status.expiresAt = r.expiresAt.toISOString()
      save()
      logEvent('renew_lock', { resource, token, expiresAt: r.expiresAt, count: status.renewals })
    },
    onError: (err, failures) => {
      status.failures++
      status.lastError = (err as Error)?.message ?? String(err)
      save()
      logEvent('renew_failed', { resource, token, failures, error: status.lastError })
    },
    onLost
  }).start()
}
