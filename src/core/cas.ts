import type { DocumentReference, DocumentSnapshot, Firestore } from '@google-cloud/firestore'
import { LeasefenceError, StoreUnavailableError } from './errors'
import { systemClock, type Clock } from './time'

/**
 * The optimistic compare-and-set loop every lease write uses: read the document (its readTime is the
 * server's clock), decide, and write with a precondition on the updateTime that was read. A conflict
 * (someone wrote in between) re-reads at once; any other error may be an ambiguous commit, so it backs
 * off and re-reads too: the step then sees what really happened (for acquire, its own nonce).
 */
export interface CasAttempt {
  attempt: number
  /** Monotonic time the read was sent: the start of a holder's deadline. */
  sentAt: number
  snap: DocumentSnapshot
}

export interface CasOptions {
  what: string
  clock?: Clock
  maxAttempts?: number
}

const ABORTED = 10
const FAILED_PRECONDITION = 9
const ALREADY_EXISTS = 6
const NOT_FOUND = 5

/** A lost race: someone else wrote the document between our read and our write. */
export function isConflict(err: unknown): boolean {
  const c = (err as { code?: unknown })?.code
  return c === FAILED_PRECONDITION || c === ALREADY_EXISTS || c === NOT_FOUND || c === ABORTED
}

export function compareAndSet<T>(ref: DocumentReference, opts: CasOptions, step: (a: CasAttempt) => Promise<T>): Promise<T> {
  return casLoop(() => ref.get(), opts, (attempt, sentAt, snap) => step({ attempt, sentAt, snap }))
}

/**
 * The same loop over several documents read at one server time (`getAll`): the step writes a batch with
 * a precondition on each, so the check and the writes are atomic across documents without a lock.
 */
export function compareAndSetAll<T>(
  db: Firestore,
  refs: DocumentReference[],
  opts: CasOptions,
  step: (a: { attempt: number; sentAt: number; snaps: DocumentSnapshot[] }) => Promise<T>
): Promise<T> {
  return casLoop(() => db.getAll(...refs), opts, (attempt, sentAt, snaps) => step({ attempt, sentAt, snaps }))
}

async function casLoop<S, T>(
  read: () => Promise<S>,
  opts: CasOptions,
  step: (attempt: number, sentAt: number, read: S) => Promise<T>
): Promise<T> {
  const clock = opts.clock ?? systemClock
  const maxAttempts = opts.maxAttempts ?? 8
  let lastError: unknown
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const sentAt = clock.monotonic()
    let snaps: S
    try {
      snaps = await read()
    } catch (err) {
      lastError = err
      await backoff(attempt)
      continue
    }
    try {
      return await step(attempt, sentAt, snaps)
    } catch (err) {
      if (err instanceof LeasefenceError) throw err
      lastError = err
      if (!isConflict(err)) await backoff(attempt)
    }
  }
  throw new StoreUnavailableError(`${opts.what}: no definite answer after ${maxAttempts} attempts: ${messageOf(lastError)}`, lastError)
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err ?? 'unknown error')
}

function backoff(attempt: number): Promise<void> {
  const ms = Math.min(2000, 50 * 2 ** attempt) * (0.5 + Math.random())
  return new Promise((r) => setTimeout(r, ms))
}
