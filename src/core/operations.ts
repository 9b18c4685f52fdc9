import { FieldValue, Timestamp, type DocumentSnapshot } from '@google-cloud/firestore'
import { compareAndSet } from './cas'
import { ValidationError } from './errors'
import type { GateDoc, LeaseDoc, LeaseStore } from './lease-store'
import { countLiveTickets } from './queue'
import { isExpired, isLive, remainingMs } from './time'

/**
 * What operators of locks need beyond acquire/renew/release: forced release with an audit trail, skip
 * counting for stuck-lock detection, listing leases, and reading the audit trail. Writes are the same
 * compare-and-set as the lease store's (read, then write conditioned on updateTime).
 */

export interface AuditRecord {
  action: string
  owner?: string | null
  fencing?: number
  previousOwner?: string | null
  previousFencing?: number
  reason?: string | null
  actor?: string | null
  at: Date
  [key: string]: unknown
}

export interface ForceReleaseResult {
  released: boolean
  previousOwner?: string
  token: number
  wasLive: boolean
  reason: string
}

/**
 * Expires the lease now whoever holds it, keeps the fencing counter, and appends an audit record with
 * the reason and the actor. The old holder's heartbeat then finds its lease lost, and its gate refuses.
 */
export async function forceRelease(
  store: LeaseStore,
  resource: string,
  opts: { reason: string; actor: string }
): Promise<ForceReleaseResult> {
  if (!opts.reason || !opts.reason.trim()) {
    throw new ValidationError('reason: a forced release needs a reason (it goes into the audit trail)')
  }
  if (!opts.actor || !opts.actor.trim()) throw new ValidationError('actor: say who forces the release')
  const ref = store.leaseRef(resource)
  return compareAndSet(ref, { what: `force release of "${resource}"` }, async ({ snap }) => {
    const now = snap.readTime
    const cur = snap.data() as LeaseDoc | undefined
    if (!cur) return { released: false, token: 0, wasLive: false, reason: 'no lease document exists for this resource' }
    const wasLive = isLive(cur, now)
    const batch = store.db.batch()
    batch.update(
      ref,
      { expiresAt: wasLive ? now : cur.expiresAt, releasedAt: cur.releasedAt ?? now, releasedBy: `force:${opts.actor}` },
      { lastUpdateTime: snap.updateTime! }
    )
    batch.create(store.auditRef(resource), {
      action: 'force_release',
      previousOwner: cur.owner,
      fencing: cur.fencing,
      wasLive,
      reason: opts.reason,
      actor: opts.actor,
      at: FieldValue.serverTimestamp()
    })
    await batch.commit()
    return {
      released: true,
      previousOwner: cur.owner,
      token: cur.fencing,
      wasLive,
      reason: wasLive ? `expired the live lease of ${cur.owner}` : 'the lease was not live; marked released'
    }
  })
}

export interface SkipRecord {
  skipCount: number
  holder: string
  token: number
  /** How long the current holder has held it, by the server's clock. */
  heldMs: number
}

/**
 * Counts a skip against the current holder (reset on every acquisition). Returns undefined when the
 * lease turned out to be free: nothing to count.
 */
export async function recordSkip(store: LeaseStore, resource: string, skipper: string): Promise<SkipRecord | undefined> {
  const ref = store.leaseRef(resource)
  return compareAndSet(ref, { what: `skip count of "${resource}"` }, async ({ snap }) => {
    const now = snap.readTime
    const cur = snap.data() as LeaseDoc | undefined
    if (!cur || !isLive(cur, now)) return undefined
    const skipCount = (cur.skipCount ?? 0) + 1
    await ref.update(
      { skipCount, lastSkippedBy: skipper, lastSkippedAt: now },
      { lastUpdateTime: snap.updateTime! }
    )
    return { skipCount, holder: cur.owner, token: cur.fencing, heldMs: now.toMillis() - cur.acquiredAt.toMillis() }
  })
}

/** Appends one audit record (best effort callers catch). */
export async function appendAudit(store: LeaseStore, resource: string, record: Record<string, unknown>): Promise<void> {
  await store.auditRef(resource).create({ ...record, at: FieldValue.serverTimestamp() })
}

export async function readAudit(store: LeaseStore, resource: string, limit = 50): Promise<AuditRecord[]> {
  const q = await store.leaseRef(resource).collection('audit').orderBy('at', 'desc').limit(limit).get()
  return q.docs.map((d) => {
    const data = d.data()
    return { ...data, at: (data.at as Timestamp | undefined)?.toDate() ?? new Date(0) } as AuditRecord
  })
}

export interface LeaseRow {
  resource: string
  owner: string
  token: number
  live: boolean
  expiresInMs: number
  acquiredAt: Date
  releasedAt?: Date
  skipCount: number
  queueLength: number
  gateToken: number
  lastGatePassAt?: Date
  holder: Record<string, string>
  /** Expired without a release: its holder crashed or was paused (reap candidates). */
  abandoned: boolean
}

/** Lists leases (all, or the named resources) with queue length and the gate's last pass. */
export async function listLeases(store: LeaseStore, resources?: string[]): Promise<LeaseRow[]> {
  let snaps: DocumentSnapshot[]
  if (resources && resources.length) {
    snaps = await store.db.getAll(...resources.map((r) => store.leaseRef(r)))
  } else {
    snaps = (await store.db.collection(store.collection).get()).docs
  }
  const rows: LeaseRow[] = []
  for (const snap of snaps) {
    const cur = snap.data() as LeaseDoc | undefined
    if (!cur) continue
    const now = snap.readTime
    const [queue, gateSnap] = await Promise.all([
      snap.ref.collection('queue').get(),
      store.gateRef(cur.resource).get()
    ])
    const gate = gateSnap.data() as GateDoc | undefined
    const live = isLive(cur, now)
    rows.push({
      resource: cur.resource,
      owner: cur.owner,
      token: cur.fencing,
      live,
      expiresInMs: remainingMs(cur.expiresAt, now),
      acquiredAt: cur.acquiredAt.toDate(),
      releasedAt: cur.releasedAt?.toDate(),
      skipCount: cur.skipCount ?? 0,
      queueLength: countLiveTickets(queue.docs, queue.readTime),
      gateToken: gate?.fencing ?? 0,
      lastGatePassAt: gate?.passedAt?.toDate(),
      holder: cur.holder ?? {},
      abandoned: !live && !cur.releasedAt
    })
  }
  return rows.sort((a, b) => a.resource.localeCompare(b.resource))
}

/** Marks abandoned leases (expired, never released) as reaped, with an audit record each. */
export async function reapAbandoned(store: LeaseStore, actor: string, only?: string[]): Promise<LeaseRow[]> {
  const rows = (await listLeases(store, only)).filter((r) => r.abandoned)
  const reaped: LeaseRow[] = []
  for (const row of rows) {
    const ref = store.leaseRef(row.resource)
    const done = await compareAndSet(ref, { what: `reap of "${row.resource}"` }, async ({ snap }) => {
      const cur = snap.data() as LeaseDoc | undefined
      if (!cur || cur.releasedAt || !isExpired(cur.expiresAt, snap.readTime)) return false
      const batch = store.db.batch()
      batch.update(ref, { releasedAt: snap.readTime, releasedBy: `reap:${actor}` }, { lastUpdateTime: snap.updateTime! })
      batch.create(store.auditRef(row.resource), {
        action: 'reap',
        previousOwner: cur.owner,
        fencing: cur.fencing,
        actor,
        at: FieldValue.serverTimestamp()
      })
      await batch.commit()
      return true
    })
    if (done) reaped.push(row)
  }
  return reaped
}

export { Timestamp }
