import type { AcquireOptions, AcquireResult, Lease, LeaseStore } from './lease-store'
import { LeaseBusyError, WaitTimeoutError } from './errors'
import { formatDuration } from './duration'
import type { OnBusy, QueueMode } from './options'
import { liveTicketCount, QueueTicket } from './queue'
import { jitter, sleep, systemClock, type Clock } from './time'
import { onChange, Waker } from './watch'

export type BusyInfo = Extract<AcquireResult, { acquired: false }>

export interface AcquirePolicy extends AcquireOptions {
  onBusy: OnBusy
  /** wait / supersede: FIFO tickets (default) or a free-for-all. */
  queue?: QueueMode
  /** For on-busy wait: give up after this long (monotonic). */
  waitTimeoutMs?: number
  /** Fallback poll period while waiting (jittered); listeners wake waiters sooner. */
  pollMs?: number
  clock?: Clock
  signal?: AbortSignal
  /** Called while waiting, at most every `progressEveryMs` (default 10s). */
  onWaiting?(busy: BusyInfo, waitedMs: number, position: number | undefined): void
  progressEveryMs?: number
}

export type PolicyResult =
  | { acquired: true; lease: Lease; waitedMs: number }
  | { acquired: false; busy: BusyInfo; waitedMs: number; supersededBy?: string }

export function describeBusy(b: BusyInfo): string {
  const left = b.expiresAt.getTime() - b.serverTime.getTime()
  const link = b.holderMeta.runUrl ? ` (${b.holderMeta.runUrl})` : ''
  return `"${b.resource}" is held by ${b.holder}${link} with token ${b.token}, expiring in ${formatDuration(left)}`
}

/**
 * Acquire with an on-busy policy: `skip` returns the holder, `fail` throws LeaseBusyError, `wait` and
 * `supersede` wait until acquired or the timeout (WaitTimeoutError). Waiting writes nothing but the
 * waiter's queue ticket: it reads, and sleeps until the lease or the queue changes (listeners), the
 * holder's expiry, or a jittered poll period, whichever comes first. With the FIFO queue only the oldest
 * live ticket tries to acquire; `supersede` first cancels the older waiting tickets, whose waiters return
 * `supersededBy`.
 */
export async function acquireWithPolicy(
  store: LeaseStore,
  resource: string,
  owner: string,
  policy: AcquirePolicy
): Promise<PolicyResult> {
  const clock = policy.clock ?? systemClock
  const started = clock.monotonic()
  const waits = policy.onBusy === 'wait' || policy.onBusy === 'supersede'
  const queued = waits && (policy.queue ?? 'fifo') === 'fifo'
  // A newcomer does not jump a queue that is already there, even if the lease is free for a moment.
  const queueAhead = queued ? await retryRead(() => liveTicketCount(store, resource)) : 0
  const first = queueAhead > 0 ? undefined : await store.acquire(resource, owner, policy)
  if (first?.acquired) return { acquired: true, lease: first.lease, waitedMs: 0 }
  let busy: BusyInfo = first ?? (await retryRead(() => peekBusy(store, resource)))
  if (policy.onBusy === 'skip') return { acquired: false, busy, waitedMs: 0 }
  if (policy.onBusy === 'fail') throw new LeaseBusyError(`${describeBusy(busy)}; on-busy is fail`)

  const timeout = policy.waitTimeoutMs ?? 15 * 60_000
  // Only a fallback: the listeners on the lease and the queue wake a waiter on every change.
  const pollMs = policy.pollMs ?? 5000
  const progressEvery = policy.progressEveryMs ?? 10_000
  let lastProgress = -Infinity
  const wake = new Waker()
  const stopWatching = onChange(store.leaseRef(resource), () => wake.ring())
  let ticket: QueueTicket | undefined
  let stopQueueWatch: (() => void) | undefined
  try {
    if (queued) {
      ticket = await QueueTicket.join(store, resource, owner, {
        ttlMs: policy.ttlMs,
        mode: policy.onBusy === 'supersede' ? 'supersede' : 'fifo',
        holder: policy.holder
      })
      stopQueueWatch = ticket.watch(() => wake.ring())
      if (policy.onBusy === 'supersede') await ticket.cancelOlder()
    }
    for (;;) {
      const waited = clock.monotonic() - started
      if (waited >= timeout) {
        throw new WaitTimeoutError(
          `waited ${formatDuration(waited)} for ${describeBusy(busy)}; raise wait-timeout or use on-busy: skip`
        )
      }
      if (policy.signal?.aborted) {
        throw new WaitTimeoutError(`stopped waiting for "${resource}" after ${formatDuration(waited)}`)
      }
      let position: number | undefined
      if (ticket) {
        // A failed read only costs a turn: nap and look again (the deadline still bounds the wait).
        const view = await ticket.view().catch(() => undefined)
        if (!view) {
          await wake.wait(jitter(pollMs), policy.signal)
          continue
        }
        if (view.cancelled) {
          return { acquired: false, busy, waitedMs: clock.monotonic() - started, supersededBy: view.cancelledBy ?? 'a newer run' }
        }
        position = view.position
      }
      if (position === undefined || position <= 0) {
        const r = await store.acquire(resource, owner, policy)
        if (r.acquired) return { acquired: true, lease: r.lease, waitedMs: clock.monotonic() - started }
        busy = r
      }
      if (waited - lastProgress >= progressEvery) {
        lastProgress = waited
        policy.onWaiting?.(busy, waited, position)
      }
      // The head naps until the holder's expiry at the latest; others until the queue or lease changes.
      const untilExpiry = busy.expiresAt.getTime() - busy.serverTime.getTime()
      const head = position === undefined || position <= 0
      const nap = Math.min(jitter(pollMs), head ? Math.max(0, untilExpiry) + 25 : Infinity, Math.max(0, timeout - waited))
      await wake.wait(nap, policy.signal)
    }
  } finally {
    stopQueueWatch?.()
    stopWatching()
    await ticket?.leave()
  }
}

/** A plain read retried through passing errors (a dropped reply, a cancelled call). */
async function retryRead<T>(read: () => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await read()
    } catch (err) {
      if (i + 1 >= attempts) throw err
      await sleep(100 * 2 ** i)
    }
  }
}

/** The current holder, for a newcomer that queued without trying (it only reads). */
async function peekBusy(store: LeaseStore, resource: string): Promise<BusyInfo> {
  const s = await store.status(resource)
  return {
    acquired: false,
    resource,
    holder: s.live ? s.owner ?? '(unknown)' : '(queue)',
    holderMeta: s.holder,
    token: s.token,
    expiresAt: s.expiresAt ?? s.serverTime,
    serverTime: s.serverTime,
    acquiredAt: s.serverTime,
    skipCount: 0
  }
}
