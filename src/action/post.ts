import { existsSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import * as core from '@actions/core'
import { formatDuration } from '../core/duration'
import { LeaseStore } from '../core/lease-store'
import { readLocalEvents, readLostMarker } from '../core/local-state'
import { logEvent, setLogSink } from '../core/log'
import { stopProcess } from './files'
import { releaseEnvMode } from './environment'
import { decodeState, FILES, readHeartbeatStatus, type MainState } from './state'
import { outcomeOf, renderSkippedNote, renderSummary, type SummaryData } from './summary'

/**
 * The post step (post-if: always()): stop the heartbeat, release the lease if this job still holds it,
 * summarise. It never fails the job over the lease: a lease taken over is reported, not an error.
 */
export async function runPost(): Promise<void> {
  setLogSink(core.info)
  const st = decodeState((k) => core.getState(k))
  if (!st) {
    core.info('leasefence: main did not get as far as preparing a lease; nothing to do')
    return
  }
  try {
    if (st.phase !== 'acquired') {
      const notes: Partial<Record<typeof st.phase, string>> = {
        skipped: renderSkippedNote(st.resource, st.holder),
        forced: `leasefence: this job force-released "${st.resource}"; it held no lease of its own`,
        'dry-run': `leasefence: dry run on "${st.resource}": nothing was written, nothing to release`,
        disabled: 'leasefence: LEASEFENCE_DISABLED was set: no lease was taken, nothing to release'
      }
      core.info(notes[st.phase] ?? `leasefence: main did not acquire the lease${st.resource ? ` on "${st.resource}"` : ''}; nothing to release`)
      return
    }
    await finish(st)
  } catch (err) {
    core.warning(`leasefence: post could not finish cleanly: ${err instanceof Error ? err.message : String(err)}; the lease expires by its ttl`)
  } finally {
    removeCredentials(st.credentialsFile)
  }
}

async function finish(st: MainState): Promise<void> {
  const resource = st.resource!
  const owner = st.owner!
  const token = st.token!
  const dir = st.stateDir

  // 1. Stop renewing first: a renewal after the release would only report the lease "lost".
  if (st.heartbeatPid) {
    const stopped = await stopProcess(st.heartbeatPid, 'heartbeat', 5000)
    const says: Record<typeof stopped, string> = {
      'not-running': 'had already exited',
      terminated: 'stopped',
      killed: 'did not stop on SIGTERM and was killed',
      'not-ours': 'is gone (its pid now belongs to another process, left alone)',
      'still-running': 'could not be stopped (the job end will kill it)'
    }
    core.info(`leasefence: heartbeat pid ${st.heartbeatPid} ${says[stopped]}`)
  }
  const status = readHeartbeatStatus(dir)
  const marker = readLostMarker(dir)
  const events = readLocalEvents(dir)

  // 2. Release, only if owner and token still match (LeaseStore.release checks both).
  const store = new LeaseStore(st.connection ?? {})
  let release: SummaryData['release']
  try {
    const r =
      st.env && !st.env.keep && st.slot !== undefined
        ? await releaseEnv(store, st, owner, token)
        : await store.release(resource, owner, token)
    const at = new Date()
    if (r.released) {
      release = { released: true, at, wasExpired: r.wasExpired }
      logEvent('release_lock', { resource, token, wasExpired: r.wasExpired })
    } else {
      release = { released: false, reason: r.reason }
      logEvent('release_skipped', { resource, token, reason: r.reason })
    }
  } catch (err) {
    release = { released: false, reason: (err as Error).message, error: true }
    logEvent('release_skipped', { resource, token, reason: (err as Error).message })
  } finally {
    await store.close().catch(() => undefined)
  }

  // 3. Annotations, the job summary and the heartbeat's log.
  const data: SummaryData = {
    resource,
    owner,
    token,
    runUrl: st.runUrl,
    acquiredAt: st.acquiredAt ? new Date(st.acquiredAt) : undefined,
    waitedMs: st.waitedMs,
    // Main renewed by itself until the daemon was up: those count too.
    heartbeat: status && {
      renewals: status.renewals + (st.mainRenewals ?? 0),
      failures: status.failures + (st.mainRenewFailures ?? 0),
      lost: status.lost,
      lostReason: status.lostReason
    },
    lost: marker,
    events,
    slot: st.slot,
    takeover: st.takeover,
    release
  }
  const lostReason = marker?.reason ?? (status?.lost ? status.lostReason : undefined)
  if (lostReason) {
    core.warning(
      `The lease on "${resource}" (token ${token}) was lost during the job: ${lostReason}. Publishing after that was refused; ` +
        'another job may hold it now. Raise ttl, or look for a step that starved the runner.',
      { title: 'leasefence: lease lost' }
    )
  }
  for (const e of events.filter((x) => x.type === 'gate_refused')) {
    core.warning(`The fencing gate refused token ${e.token}: ${e.detail ?? 'no detail'}`, { title: 'leasefence: publish refused' })
  }
  if (!release.released && !lostReason) {
    if (release.error) core.warning(`Could not release "${resource}": ${release.reason}. It expires by its ttl.`, { title: 'leasefence: release failed' })
    else if (release.reason !== 'already released') core.warning(`The lease on "${resource}" was not released: ${release.reason}.`, { title: 'leasefence: lease taken over' })
  }
  if (process.env.GITHUB_STEP_SUMMARY) {
    await core.summary.addRaw(renderSummary(data)).write()
  }
  const held = data.acquiredAt && release.released ? ` after holding it for ${formatDuration(release.at.getTime() - data.acquiredAt.getTime())}` : ''
  core.info(`leasefence: "${resource}" token ${token}: ${outcomeOf(data).text}${held}`)
  if (data.heartbeat) {
    core.info(
      `leasefence: heartbeats sent ${data.heartbeat.renewals}, failed ${data.heartbeat.failures}; ` +
        `gate passes ${events.filter((e) => e.type === 'gate_passed').length}`
    )
  }
  if (dir && existsSync(join(dir, FILES.heartbeatLog))) {
    core.startGroup('leasefence heartbeat log')
    core.info(readFileSync(join(dir, FILES.heartbeatLog), 'utf8').trimEnd())
    core.endGroup()
  }
}

/** Environment mode: tear the slot's environment down (processes, schema, worktree), then release. */
async function releaseEnv(store: LeaseStore, st: MainState, owner: string, token: number) {
  const env = st.env!
  const r = await releaseEnvMode(store, {
    resource: env.resource,
    slot: st.slot!,
    owner,
    token,
    databaseUrl: env.database ? core.getInput('env-database-url') || undefined : undefined,
    worktree: env.worktree
  })
  if (r.released) {
    core.info(`leasefence: environment of slot ${st.slot} torn down (${r.detail})`)
    return { released: true as const, token, wasExpired: false }
  }
  if (r.error) core.warning(`leasefence: ${r.reason}`, { title: 'leasefence env: teardown incomplete' })
  return { released: false as const, reason: r.reason }
}

function removeCredentials(file: string | undefined): void {
  if (!file) return
  try {
    rmSync(dirname(file), { recursive: true, force: true })
    core.info('leasefence: removed the credentials file')
  } catch (err) {
    core.warning(`leasefence: could not remove the credentials file ${file}: ${(err as Error).message}`)
  }
}
