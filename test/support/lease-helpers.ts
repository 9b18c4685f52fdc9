import { Timestamp, type Firestore } from '@google-cloud/firestore'
import type { LeaseDoc, LeaseStore } from '../../src/core/lease-store'

/**
 * Direct document access for tests: what the lease and gate documents really say, and writes made
 * "behind a holder's back" (as another party or a paused process would see them).
 */

export interface DocView<T> {
  exists: boolean
  data?: T
  updateTime?: Timestamp
  readTime: Timestamp
}

export async function readLeaseDoc(store: LeaseStore, resource: string): Promise<DocView<LeaseDoc>> {
  const snap = await store.leaseRef(resource).get()
  return { exists: snap.exists, data: snap.data() as LeaseDoc | undefined, updateTime: snap.updateTime, readTime: snap.readTime }
}

/** Sets the lease's expiresAt to just before the server's now, as if its holder had stopped renewing. */
export async function expireBehindBack(store: LeaseStore, resource: string): Promise<void> {
  const snap = await store.leaseRef(resource).get()
  if (!snap.exists) throw new Error(`no lease document for ${resource}`)
  await store.leaseRef(resource).update({ expiresAt: Timestamp.fromMillis(snap.readTime.toMillis() - 1) })
}

/** The lease's audit records, oldest first (by server commit time). */
export async function auditActions(store: LeaseStore, resource: string): Promise<{ action: string; owner?: string; fencing?: number }[]> {
  const q = await store.leaseRef(resource).collection('audit').get()
  return q.docs
    .map((d) => ({ data: d.data(), t: d.createTime.toMillis() }))
    .sort((a, b) => a.t - b.t)
    .map(({ data }) => data as { action: string; owner?: string; fencing?: number })
}

/** Every document id of a top-level collection (empty when it has none). */
export async function collectionIds(db: Firestore, collection: string): Promise<string[]> {
  const q = await db.collection(collection).get()
  return q.docs.map((d) => d.id)
}

/** Names of the project's top-level collections: [] when nothing was ever written to it. */
export async function topLevelCollections(db: Firestore): Promise<string[]> {
  const cols = await db.listCollections()
  return cols.map((c) => c.id)
}

/** Waits until the server reports the lease expired (or free). */
export async function waitUntilFree(store: LeaseStore, resource: string, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const s = await store.status(resource)
    if (!s.live) return
    if (performance.now() > deadline) throw new Error(`lease ${resource} still live after ${timeoutMs}ms`)
    await new Promise((r) => setTimeout(r, Math.min(200, Math.max(20, s.remainingMs))))
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** The error a dropped gRPC reply looks like (UNAVAILABLE), for `faults.afterCommit`. */
export function unavailableError(message = 'reply lost after commit'): Error {
  return Object.assign(new Error(`14 UNAVAILABLE: ${message}`), { code: 14 })
}
