import { FieldValue, type DocumentData, type DocumentReference, type Timestamp } from '@google-cloud/firestore'
import type { LeaseStore } from './lease-store'
import { onChange } from './watch'

/**
 * The FIFO wait queue of one resource: `leases/{id}/queue/{ticket}`, ordered by the server's commit time.
 * A ticket is live while its waiter keeps heartbeating it (heartbeatAt + ttl after the server's now);
 * a waiter that disappears is skipped one ttl later. The lease goes to the oldest live ticket: only the
 * head of the queue tries to acquire. With `supersede`, a newer waiter cancels the older waiting tickets.
 */
export interface TicketDoc {
  owner: string
  createdAt: Timestamp
  heartbeatAt: Timestamp
  ttlMs: number
  mode: 'fifo' | 'supersede'
  cancelled: boolean
  cancelledBy?: string | null
  holder?: Record<string, string>
}

export interface QueueView {
  /** 0 = head of the queue; -1 when our ticket is gone or cancelled. */
  position: number
  liveTickets: number
  cancelled: boolean
  cancelledBy?: string
  serverNow: Timestamp
}

export class QueueTicket {
  readonly ref: DocumentReference
  private timer?: NodeJS.Timeout
  private closed = false

  private constructor(
    private readonly store: LeaseStore,
    private readonly resource: string,
    readonly owner: string,
    private readonly ttlMs: number
  ) {
    this.ref = store.leaseRef(resource).collection('queue').doc()
  }

  get id(): string {
    return this.ref.id
  }

  /** Takes a ticket and keeps it alive every ttl/3 until `leave`. */
  static async join(
    store: LeaseStore,
    resource: string,
    owner: string,
    opts: { ttlMs: number; mode: 'fifo' | 'supersede'; holder?: Record<string, string> }
  ): Promise<QueueTicket> {
    const t = new QueueTicket(store, resource, owner, opts.ttlMs)
    const ticket = {
      owner,
      createdAt: FieldValue.serverTimestamp(),
      heartbeatAt: FieldValue.serverTimestamp(),
      ttlMs: opts.ttlMs,
      mode: opts.mode,
      cancelled: false,
      cancelledBy: null,
      holder: opts.holder ?? {}
    }
    // A dropped reply or a cancelled call may hide a create that went through: retry with the same
    // ticket id, where ALREADY_EXISTS means the earlier attempt made it.
    for (let attempt = 0; ; attempt++) {
      try {
        await t.ref.create(ticket)
        break
      } catch (err) {
        if ((err as { code?: number }).code === 6 && attempt > 0) break
        if (attempt >= 5) throw err
        await new Promise((r) => setTimeout(r, 100 * 2 ** attempt))
      }
    }
    t.keepAlive()
    return t
  }

  private keepAlive(): void {
    const every = Math.max(250, Math.floor(this.ttlMs / 3))
    this.timer = setInterval(() => {
      if (this.closed) return
      // Only the heartbeat field: a cancellation written by a superseding waiter is kept.
      this.ref.update({ heartbeatAt: FieldValue.serverTimestamp() }).catch(() => undefined)
    }, every)
    this.timer.unref?.()
  }

  /** Where this ticket stands, by the server's clock. */
  async view(): Promise<QueueView> {
    const snap = await this.store.leaseRef(this.resource).collection('queue').orderBy('createdAt').get()
    const now = snap.readTime
    let position = -1
    let live = 0
    let cancelled = false
    let cancelledBy: string | undefined
    for (const d of snap.docs) {
      const t = d.data() as TicketDoc
      if (d.id === this.id) {
        cancelled = t.cancelled
        cancelledBy = t.cancelledBy ?? undefined
        if (!t.cancelled) position = live
      }
      if (!t.cancelled && isTicketLive(t, now.toMillis())) live++
    }
    return { position: cancelled ? -1 : position, liveTickets: live, cancelled, cancelledBy, serverNow: now }
  }

  /** supersede: cancel every older, still waiting ticket. Returns how many were cancelled. */
  async cancelOlder(): Promise<number> {
    const snap = await this.store.leaseRef(this.resource).collection('queue').orderBy('createdAt').get()
    let n = 0
    for (const d of snap.docs) {
      if (d.id === this.id) break
      const t = d.data() as TicketDoc
      if (t.cancelled) continue
      await d.ref.update({ cancelled: true, cancelledBy: this.owner }, { lastUpdateTime: d.updateTime }).then(
        () => n++,
        () => undefined
      )
    }
    return n
  }

  /** Calls `onChange` whenever the queue changes (a ticket joins, leaves or is cancelled). */
  watch(callback: () => void): () => void {
    return onChange(this.store.leaseRef(this.resource).collection('queue'), callback)
  }

  async leave(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.timer)
    await this.ref.delete().catch(() => undefined)
  }
}

export function isTicketLive(t: Pick<TicketDoc, 'heartbeatAt' | 'ttlMs'>, serverNowMs: number): boolean {
  // A ticket whose server timestamp is still pending reads as null: it was just written, so it is live.
  if (!t.heartbeatAt) return true
  return t.heartbeatAt.toMillis() + t.ttlMs > serverNowMs
}

/** How many live tickets wait on the resource (used by a newcomer to decide whether to queue). */
export async function liveTicketCount(store: LeaseStore, resource: string): Promise<number> {
  const snap = await store.leaseRef(resource).collection('queue').get()
  return countLiveTickets(snap.docs, snap.readTime)
}

/** Tickets neither cancelled nor abandoned, at the server's now. */
export function countLiveTickets(docs: { data(): DocumentData }[], serverNow: Timestamp): number {
  return docs.filter((d) => {
    const t = d.data() as TicketDoc
    return !t.cancelled && isTicketLive(t, serverNow.toMillis())
  }).length
}
