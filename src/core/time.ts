import { Timestamp } from '@google-cloud/firestore'

/**
 * Time, in one place.
 *
 * Two clocks matter and they are never mixed:
 * - the **server clock** (a Firestore read's `readTime`) decides whether a lease is expired and when it
 *   will expire. No runner's wall clock is ever consulted for that, so a runner an hour off can neither
 *   steal a live lease nor keep a dead one.
 * - the **monotonic clock** of the holder measures its own deadline: ttl from the moment it *sent* the
 *   request that was confirmed. The server's expiry (readTime + ttl, readTime being later than the send)
 *   is never earlier than that deadline, so the holder always gives up first.
 */
export interface Clock {
  /** Monotonic milliseconds (performance.now()); only differences mean anything. */
  monotonic(): number
  /** Wall-clock milliseconds; used for logs and summaries only, never for expiry. */
  wall(): number
}

export const systemClock: Clock = {
  monotonic: () => performance.now(),
  wall: () => Date.now()
}

/** Where expiry is decided: a lease is expired when its expiresAt is at or before the server's now. */
export function isExpired(expiresAt: Timestamp | undefined | null, serverNow: Timestamp): boolean {
  if (!expiresAt) return true
  return expiresAt.toMillis() <= serverNow.toMillis()
}

/** A lease is live while it is neither released nor expired at the server's now. */
export function isLive(
  lease: { expiresAt: Timestamp; releasedAt?: Timestamp | null } | undefined,
  serverNow: Timestamp
): boolean {
  return !!lease && !lease.releasedAt && !isExpired(lease.expiresAt, serverNow)
}

/** The server-side expiry of a lease confirmed at serverNow. */
export function expiryAfter(serverNow: Timestamp, ttlMs: number): Timestamp {
  return Timestamp.fromMillis(serverNow.toMillis() + ttlMs)
}

/** Milliseconds left on a lease, by the server's clock (negative when expired). */
export function remainingMs(expiresAt: Timestamp, serverNow: Timestamp): number {
  return expiresAt.toMillis() - serverNow.toMillis()
}

/** The holder's own deadline on its monotonic clock: ttl after the confirmed request was sent. */
export function holderDeadline(sentAtMonotonic: number, ttlMs: number): number {
  return sentAtMonotonic + ttlMs
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const timer = setTimeout(done, Math.max(0, ms))
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}

/** `p`, or a rejection with `message` after `ms`: a call hung on the network must not hold up a stop. */
export function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

/** ms ± fraction, so that many waiters do not poll in lock-step. */
export function jitter(ms: number, fraction = 0.3, random: () => number = Math.random): number {
  return Math.max(0, ms * (1 - fraction + 2 * fraction * random()))
}
