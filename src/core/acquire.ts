import type { AcquireOptions, AcquireResult, Lease, LeaseStore } from './lease-store'
import { LeaseBusyError, WaitTimeoutError } from './errors'
import { formatDuration } from './duration'
import type { OnBusy } from './options'
import { jitter, sleep, systemClock, type Clock } from './time'

export type BusyInfo = Extract<AcquireResult, { acquired: false }>

export interface AcquirePolicy extends AcquireOptions {
  onBusy: OnBusy
  /** For on-busy wait: give up after this long (monotonic). */
  waitTimeoutMs?: number
  /** Fallback poll period while waiting (jittered); a listener wakes waiters sooner. */
  pollMs?: number
  clock?: Clock
  signal?: AbortSignal
  /** Called while waiting, at most every `progressEveryMs` (default 10s). */
  onWaiting?(busy: BusyInfo, waitedMs: number): void
  progressEveryMs?: number
}

export type PolicyResult =
  | { acquired: true; lease: Lease; waitedMs: number }
  | { acquired: false; busy: BusyInfo; waitedMs: number }

export function describeBusy(b: BusyInfo): string {
  const left = b.expiresAt.getTime() - b.serverTime.getTime()
  const link = b.holderMeta.runUrl ? ` (${b.holderMeta.runUrl})` : ''
  return `"${b.resource}" is held by ${b.holder}${link} with token ${b.token}, expiring in ${formatDuration(left)}`
}

/**
 * Acquire with an on-busy policy: `skip` returns the holder, `fail` throws LeaseBusyError, `wait` retries
 * until acquired or the timeout (WaitTimeoutError). Waiting only reads; between reads it sleeps until the
 * earlier of the poll period and the holder's expiry, or until the lease document changes (listener).
 */
export async function acquireWithPolicy(
  store: LeaseStore,
  resource: string,
  owner: string,
  policy: AcquirePolicy
): Promise<PolicyResult> {
  const clock = policy.clock ?? systemClock
  const started = clock.monotonic()
  const first = await store.acquire(resource, owner, policy)
  if (first.acquired) return { acquired: true, lease: first.lease, waitedMs: 0 }
  if (policy.onBusy === 'skip') return { acquired: false, busy: first, waitedMs: 0 }
  if (policy.onBusy === 'fail') throw new LeaseBusyError(`${describeBusy(first)}; on-busy is fail`)

  const timeout = policy.waitTimeoutMs ?? 15 * 60_000
  const pollMs = policy.pollMs ?? 1000
  const progressEvery = policy.progressEveryMs ?? 10_000
  let lastProgress = -Infinity
  let busy: BusyInfo = first
  const watch = watchDocument(store, resource)
  try {
    for (;;) {
      const waited = clock.monotonic() - started
      if (waited >= timeout) {
        throw new WaitTimeoutError(`waited ${formatDuration(waited)} for ${describeBusy(busy)}; raise wait-timeout or use on-busy: skip`)
      }
      if (policy.signal?.aborted) {
        throw new WaitTimeoutError(`stopped waiting for "${resource}" after ${formatDuration(waited)}`)
      }
      if (waited - lastProgress >= progressEvery) {
        lastProgress = waited
        policy.onWaiting?.(busy, waited)
      }
      const untilExpiry = busy.expiresAt.getTime() - busy.serverTime.getTime()
      const nap = Math.min(jitter(pollMs), Math.max(0, untilExpiry) + 25, timeout - waited)
      await watch.next(nap, policy.signal)
      const r = await store.acquire(resource, owner, policy)
      if (r.acquired) return { acquired: true, lease: r.lease, waitedMs: clock.monotonic() - started }
      busy = r
    }
  } finally {
    watch.close()
  }
}

/** Wakes a waiter when the lease document changes (a release), or after `ms`, whichever is first. */
function watchDocument(store: LeaseStore, resource: string) {
  let wake: (() => void) | undefined
  let changed = false
  let first = true
  let unsubscribe: (() => void) | undefined
  try {
    unsubscribe = store.leaseRef(resource).onSnapshot(
      () => {
        if (first) {
          first = false
          return
        }
        changed = true
        wake?.()
      },
      () => {
        // Listener errors only cost speed: the poll still runs.
        unsubscribe = undefined
      }
    )
  } catch {
    unsubscribe = undefined
  }
  return {
    async next(ms: number, signal?: AbortSignal): Promise<void> {
      if (changed) {
        changed = false
        return
      }
      const ac = new AbortController()
      wake = () => ac.abort()
      const onAbort = () => ac.abort()
      signal?.addEventListener('abort', onAbort, { once: true })
      await sleep(ms, ac.signal)
      signal?.removeEventListener('abort', onAbort)
      wake = undefined
      changed = false
    },
    close(): void {
      unsubscribe?.()
    }
  }
}
