import type { DocumentReference, Query } from '@google-cloud/firestore'
import { sleep } from './time'

/**
 * How waiters hear about changes: a Firestore listener that calls `onChange` on every change after the
 * initial snapshot, and a one-shot alarm a waiting loop naps on. Listener errors only cost speed: the
 * waiter's fallback poll still runs.
 */
export function onChange(target: DocumentReference | Query, callback: () => void): () => void {
  let first = true
  const next = () => {
    if (first) first = false
    else callback()
  }
  try {
    // The overloads of DocumentReference and Query differ only in the snapshot type passed to `next`.
    return (target as DocumentReference).onSnapshot(next, () => undefined)
  } catch {
    return () => undefined
  }
}

/** A one-shot alarm: `ring` wakes the current (or the next) `wait`. */
export class Waker {
  private pending = false
  private wakeNow?: () => void
  ring(): void {
    this.pending = true
    this.wakeNow?.()
  }
  async wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.pending) {
      this.pending = false
      return
    }
    const ac = new AbortController()
    this.wakeNow = () => ac.abort()
    const onAbort = () => ac.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    await sleep(ms, ac.signal)
    signal?.removeEventListener('abort', onAbort)
    this.wakeNow = undefined
    this.pending = false
  }
}
