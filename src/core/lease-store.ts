import { randomUUID } from 'node:crypto'
import {
  FieldValue,
  Timestamp,
  type DocumentReference,
  type Firestore,
  type Transaction
} from '@google-cloud/firestore'
import { openFirestore, resolveConnection, type ConnectionSettings } from './connection'
import { compareAndSet, compareAndSetAll, messageOf } from './cas'
import { LeaseLostError, StaleFencingError, StoreUnavailableError } from './errors'
import { validateOwner, validateResource, validateToken } from './options'
import { resourceDocId } from './resource-id'
import { expiryAfter, holderDeadline, isExpired, isLive, remainingMs, systemClock, type Clock } from './time'

/** The lease document, `leases/{id}`. */
export interface LeaseDoc {
  resource: string
  owner: string
  fencing: number
  expiresAt: Timestamp
  acquiredAt: Timestamp
  renewedAt: Timestamp
  nonce: string
  holder: Record<string, string>
  ttlMs: number
  releasedAt?: Timestamp | null
  releasedBy?: string | null
  /** Skips recorded against this holder since its acquisition (reset on every acquisition). */
  skipCount?: number
  lastSkippedBy?: string | null
  lastSkippedAt?: Timestamp | null
  /** The last token that passed the gate, and when (written by passGate). */
  lastGateToken?: number
  lastGatePassAt?: Timestamp
}

/** The gate document, `publish_gate/{id}`. */
export interface GateDoc {
  resource: string
  fencing: number
  owner: string
  passedAt: Timestamp
  passes?: number
}

/** A lease this process holds. */
export interface Lease {
  resource: string
  docId: string
  owner: string
  token: number
  ttlMs: number
  acquiredAt: Date
  expiresAt: Date
  /** Monotonic ms after which the holder must consider the lease lost (see time.ts). */
  deadline: number
  /** Who held it before, when this acquisition took it from another owner. */
  previousOwner?: string
  /** True when the previous owner's lease had expired without a release (it crashed or was paused). */
  previousExpired: boolean
}

export type AcquireResult =
  | { acquired: true; lease: Lease }
  | {
      acquired: false
      resource: string
      holder: string
      holderMeta: Record<string, string>
      token: number
      expiresAt: Date
      serverTime: Date
      acquiredAt: Date
      skipCount: number
    }

export type RenewResult =
  | { renewed: true; expiresAt: Date; deadline: number }
  | { renewed: false; reason: string }

export type ReleaseResult =
  | { released: true; token: number; wasExpired: boolean }
  | { released: false; reason: string }

export interface LeaseStatus {
  resource: string
  docId: string
  exists: boolean
  owner?: string
  token: number
  expiresAt?: Date
  live: boolean
  remainingMs: number
  holder: Record<string, string>
  serverTime: Date
}

export interface StoreFaults {
  /**
   * Test seam for the ambiguous commit: called right after a write has been committed, before its
   * result is used. Throwing here makes the store see what a dropped reply looks like.
   */
  afterCommit?(op: 'acquire' | 'renew' | 'release'): void | Promise<void>
}

export interface LeaseStoreOptions extends ConnectionSettings {
  firestore?: Firestore
  clock?: Clock
  /** Compare-and-set attempts before giving up with StoreUnavailableError (default 8). */
  maxAttempts?: number
  faults?: StoreFaults
}

export interface AcquireOptions {
  ttlMs: number
  /** Free-form metadata shown to others (run URL, host, ...). */
  holder?: Record<string, string>
  /**
   * Take the lease from this exact holder even though it has not expired: its run is known to be over
   * (liveness-aware takeover). Applies only while the document still shows this owner and token.
   */
  staleHolder?: { owner: string; token: number; reason: string }
}


/**
 * The Firestore lease store.
 *
 * Acquire, renew and release are optimistic compare-and-set operations: a plain read (whose readTime is
 * the server's clock) followed by a write conditioned on the document's updateTime (or `create` for a new
 * document). That is as atomic as a transaction, and unlike a transaction it takes no lock: a caller that
 * finds the lease busy only reads and never delays the holder's renewals. Under contention it measured
 * ~50x faster than transactions on the emulator (see BENCHMARKS.md / shared notes).
 *
 * The gate is a real transaction over the gate and the lease documents, because fenced writes of
 * callers' own documents must join it.
 */
export class LeaseStore {
  readonly db: Firestore
  readonly collection: string
  readonly gateCollection: string
  private readonly clock: Clock
  private readonly maxAttempts: number
  private readonly faults: StoreFaults
  private readonly ownsClient: boolean

  constructor(opts: LeaseStoreOptions = {}) {
    const c = resolveConnection(opts)
    this.db = opts.firestore ?? openFirestore(opts)
    this.ownsClient = !opts.firestore
    this.collection = c.collection
    this.gateCollection = c.gateCollection
    this.clock = opts.clock ?? systemClock
    this.maxAttempts = opts.maxAttempts ?? 8
    this.faults = opts.faults ?? {}
  }

  leaseRef(resource: string): DocumentReference {
    return this.db.collection(this.collection).doc(resourceDocId(resource))
  }

  gateRef(resource: string): DocumentReference {
    return this.db.collection(this.gateCollection).doc(resourceDocId(resource))
  }

  auditRef(resource: string): DocumentReference {
    return this.leaseRef(resource).collection('audit').doc()
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.db.terminate()
  }

  /**
   * Takes the lease when it is free, expired, or already held by `owner`; the fencing token becomes the
   * previous one + 1. When another owner holds it unexpired, returns who and until when, having written
   * nothing. A write whose reply was lost is recognised by this call's nonce and yields the same token.
   */
  async acquire(resource: string, owner: string, opts: AcquireOptions): Promise<AcquireResult> {
    validateResource(resource)
    validateOwner(owner)
    const ref = this.leaseRef(resource)
    const nonce = randomUUID()
    // Monotonic send time of the earliest read that led to a write: the deadline of a recognised write.
    let firstWriteSentAt: number | undefined
    return compareAndSet(ref, this.casOptions(`acquire "${resource}"`), async ({ snap, sentAt }): Promise<AcquireResult> => {
      const now = snap.readTime
      const prev = snap.data() as LeaseDoc | undefined
      if (prev && prev.nonce === nonce && prev.owner === owner && firstWriteSentAt !== undefined) {
        // Our own earlier write went through although its reply did not reach us.
        return { acquired: true, lease: this.toLease(prev, ttlOf(prev, opts.ttlMs), firstWriteSentAt) }
      }
      const stale =
        !!prev && !!opts.staleHolder && prev.owner === opts.staleHolder.owner && prev.fencing === opts.staleHolder.token
      if (prev && prev.owner !== owner && !isExpired(prev.expiresAt, now) && !stale) {
        return {
          acquired: false,
          resource,
          holder: prev.owner,
          holderMeta: prev.holder ?? {},
          token: prev.fencing,
          expiresAt: prev.expiresAt.toDate(),
          serverTime: now.toDate(),
          acquiredAt: prev.acquiredAt.toDate(),
          skipCount: prev.skipCount ?? 0
        }
      }
      const previousExpired = !!prev && prev.owner !== owner && !prev.releasedAt
      const doc: LeaseDoc = {
        resource,
        owner,
        fencing: (prev?.fencing ?? 0) + 1,
        expiresAt: expiryAfter(now, opts.ttlMs),
        acquiredAt: now,
        renewedAt: now,
        nonce,
        holder: opts.holder ?? {},
        ttlMs: opts.ttlMs,
        releasedAt: null,
        releasedBy: null,
        skipCount: 0,
        lastSkippedBy: null,
        lastSkippedAt: null
      }
      firstWriteSentAt ??= sentAt
      const batch = this.db.batch()
      if (snap.exists) batch.update(ref, { ...doc }, { lastUpdateTime: snap.updateTime! })
      else batch.create(ref, doc)
      batch.create(this.auditRef(resource), {
        action: auditAction(prev, owner, stale && !isExpired(prev!.expiresAt, now), previousExpired),
        reason: stale ? opts.staleHolder!.reason : null,
        owner,
        fencing: doc.fencing,
        previousOwner: prev?.owner ?? null,
        previousFencing: prev?.fencing ?? 0,
        at: FieldValue.serverTimestamp()
      })
      await batch.commit()
      await this.faults.afterCommit?.('acquire')
      const lease = this.toLease(doc, opts.ttlMs, sentAt)
      if (prev && prev.owner !== owner) {
        lease.previousOwner = prev.owner
        lease.previousExpired = previousExpired
      }
      return { acquired: true, lease }
    })
  }

  /**
   * Extends the lease by its ttl from the server's now, only while the document still shows this owner
   * and token unexpired. Never changes the token.
   */
  async renew(resource: string, owner: string, token: number, ttlMs: number): Promise<RenewResult> {
    const ref = this.leaseRef(resource)
    return compareAndSet(ref, this.casOptions(`renew "${resource}"`), async ({ snap, sentAt }): Promise<RenewResult> => {
      const now = snap.readTime
      const why = whyNotHeld(snap.data() as LeaseDoc | undefined, owner, token, now)
      if (why) return { renewed: false, reason: why }
      const expiresAt = expiryAfter(now, ttlMs)
      await ref.update({ expiresAt, renewedAt: now, ttlMs }, { lastUpdateTime: snap.updateTime! })
      await this.faults.afterCommit?.('renew')
      return { renewed: true, expiresAt: expiresAt.toDate(), deadline: holderDeadline(sentAt, ttlMs) }
    })
  }

  /**
   * Expires the lease now, only if owner and token still match. Keeps the fencing counter (the document
   * is never deleted). Releasing a lease held by someone else changes nothing and says why.
   */
  async release(resource: string, owner: string, token: number): Promise<ReleaseResult> {
    const ref = this.leaseRef(resource)
    // The writes this call sent (releasedAt = that attempt's read time): one whose reply was lost is ours.
    const sent: { releasedAt: Timestamp; wasExpired: boolean }[] = []
    return compareAndSet(ref, this.casOptions(`release "${resource}"`), async ({ snap }): Promise<ReleaseResult> => {
      const now = snap.readTime
      const cur = snap.data() as LeaseDoc | undefined
      if (!cur) return { released: false, reason: 'no lease document exists for this resource' }
      if (cur.owner !== owner || cur.fencing !== token) {
        return { released: false, reason: `now held by ${cur.owner} with token ${cur.fencing}; left untouched` }
      }
      if (cur.releasedAt) {
        const ours = cur.releasedBy === owner ? sent.find((w) => w.releasedAt.isEqual(cur.releasedAt!)) : undefined
        if (ours) return { released: true, token, wasExpired: ours.wasExpired }
        return { released: false, reason: 'already released' }
      }
      const wasExpired = isExpired(cur.expiresAt, now)
      sent.push({ releasedAt: now, wasExpired })
      const batch = this.db.batch()
      batch.update(ref, { expiresAt: wasExpired ? cur.expiresAt : now, releasedAt: now, releasedBy: owner }, {
        lastUpdateTime: snap.updateTime!
      })
      batch.create(this.auditRef(resource), {
        action: 'release',
        owner,
        fencing: token,
        wasExpired,
        at: FieldValue.serverTimestamp()
      })
      await batch.commit()
      await this.faults.afterCommit?.('release')
      return { released: true, token, wasExpired }
    })
  }

  /** Reads the lease as the server sees it now. */
  async status(resource: string): Promise<LeaseStatus> {
    const snap = await this.leaseRef(resource).get()
    const now = snap.readTime
    const cur = snap.data() as LeaseDoc | undefined
    return {
      resource,
      docId: resourceDocId(resource),
      exists: !!cur,
      owner: cur?.owner,
      token: cur?.fencing ?? 0,
      expiresAt: cur?.expiresAt?.toDate(),
      live: isLive(cur, now),
      remainingMs: cur ? remainingMs(cur.expiresAt, now) : 0,
      holder: cur?.holder ?? {},
      serverTime: now.toDate()
    }
  }

  /**
   * The fencing gate: one atomic step over the gate and the lease documents. Refuses a token lower than
   * the highest that ever passed (StaleFencingError) and a holder whose lease no longer shows this owner
   * and token unexpired (LeaseLostError); otherwise records the token and lets the caller go on.
   * Equal tokens pass: a holder may publish more than once.
   *
   * Both documents are read at one server time and the gate record is written in a batch conditioned on
   * both documents' updateTime (the lease gets `lastGateToken`/`lastGatePassAt`): atomic like a
   * transaction, but lock-free. A transaction here held a lock on the lease document: a publisher killed
   * inside it, or one whose reply was lost, froze every renewal, acquisition and release of the resource
   * for ~60 s (the chaos suite found it; scripts/chaos/gate-lock-repro.ts shows it).
   */
  async passGate(resource: string, owner: string, token: number): Promise<GatePass> {
    validateResource(resource)
    validateOwner(owner)
    validateToken(token)
    const gateRef = this.gateRef(resource)
    const leaseRef = this.leaseRef(resource)
    return compareAndSetAll(this.db, [gateRef, leaseRef], this.casOptions(`gate for "${resource}"`), async ({ snaps }) => {
      const [gateSnap, leaseSnap] = snaps
      const now = leaseSnap.readTime
      const gate = gateSnap.data() as GateDoc | undefined
      if (gate && token < gate.fencing) throw new StaleFencingError(resource, token, gate.fencing, gate.owner)
      const why = whyNotHeld(leaseSnap.data() as LeaseDoc | undefined, owner, token, now)
      if (why) throw new LeaseLostError(resource, token, why)
      const record = { resource, fencing: token, owner, passedAt: now }
      const batch = this.db.batch()
      if (gateSnap.exists) batch.update(gateRef, { ...record, passes: FieldValue.increment(1) }, { lastUpdateTime: gateSnap.updateTime! })
      else batch.create(gateRef, { ...record, passes: 1 })
      batch.update(leaseRef, { lastGateToken: token, lastGatePassAt: now }, { lastUpdateTime: leaseSnap.updateTime! })
      await batch.commit()
      return { resource, token, owner, passedAt: now.toDate(), previousToken: gate?.fencing ?? 0 }
    })
  }

  /**
   * A truly fenced write for side effects that live in Firestore: `fn` runs inside a transaction over
   * the gate and the lease documents, after the same checks as passGate, and its writes commit
   * atomically with the gate record (or not at all). `fn` may be called more than once (Firestore
   * retries contended transactions): keep it free of side effects outside the transaction. The
   * transaction locks the lease document while it runs, delaying renewals: keep `fn` short.
   */
  async fencedTransaction<T>(
    resource: string,
    owner: string,
    token: number,
    fn: (tx: Transaction) => Promise<T>
  ): Promise<{ pass: GatePass; result: T }> {
    validateResource(resource)
    validateOwner(owner)
    validateToken(token)
    const gateRef = this.gateRef(resource)
    const leaseRef = this.leaseRef(resource)
    try {
      return await this.db.runTransaction(async (tx) => {
        const [gateSnap, leaseSnap] = await tx.getAll(gateRef, leaseRef)
        const now = leaseSnap.readTime
        const gate = gateSnap.data() as GateDoc | undefined
        if (gate && token < gate.fencing) {
          throw new StaleFencingError(resource, token, gate.fencing, gate.owner)
        }
        const why = whyNotHeld(leaseSnap.data() as LeaseDoc | undefined, owner, token, now)
        if (why) throw new LeaseLostError(resource, token, why)
        const result = await fn(tx)
        tx.set(gateRef, {
          resource,
          fencing: token,
          owner,
          passedAt: now,
          passes: FieldValue.increment(1)
        }, { merge: true })
        return { pass: { resource, token, owner, passedAt: now.toDate(), previousToken: gate?.fencing ?? 0 }, result }
      })
    } catch (err) {
      if (err instanceof StaleFencingError || err instanceof LeaseLostError) throw err
      throw new StoreUnavailableError(`gate for "${resource}" could not be checked: ${messageOf(err)}`, err)
    }
  }

  /** The gate's record: the highest token that passed. */
  async gateStatus(resource: string): Promise<GateDoc | undefined> {
    const snap = await this.gateRef(resource).get()
    return snap.data() as GateDoc | undefined
  }

  private casOptions(what: string) {
    return { what, clock: this.clock, maxAttempts: this.maxAttempts }
  }

  private toLease(doc: LeaseDoc, ttlMs: number, sentAt: number): Lease {
    return {
      resource: doc.resource,
      docId: resourceDocId(doc.resource),
      owner: doc.owner,
      token: doc.fencing,
      ttlMs,
      acquiredAt: doc.acquiredAt.toDate(),
      expiresAt: doc.expiresAt.toDate(),
      deadline: holderDeadline(sentAt, ttlMs),
      previousExpired: false
    }
  }
}

export interface GatePass {
  resource: string
  token: number
  owner: string
  passedAt: Date
  /** The highest token that had passed before this one (0 for the first). */
  previousToken: number
}

/** Why the document does not show `owner` holding `token` unexpired at the server's `now`, or undefined. */
export function whyNotHeld(cur: LeaseDoc | undefined, owner: string, token: number, now: Timestamp): string | undefined {
  if (!cur) return 'the lease document does not exist'
  if (cur.fencing !== token || cur.owner !== owner) {
    return `taken over by ${cur.owner} with token ${cur.fencing}`
  }
  if (cur.releasedAt) return 'it was released'
  if (isExpired(cur.expiresAt, now)) {
    return `it expired at ${cur.expiresAt.toDate().toISOString()} (server time ${now.toDate().toISOString()})`
  }
  return undefined
}

function ttlOf(doc: LeaseDoc, fallback: number): number {
  return typeof doc.ttlMs === 'number' ? doc.ttlMs : fallback
}

function auditAction(prev: LeaseDoc | undefined, owner: string, staleRun: boolean, previousExpired: boolean): string {
  if (staleRun) return 'takeover_stale_run'
  if (!prev || prev.owner === owner) return 'acquire'
  return previousExpired ? 'takeover_expired' : 'acquire_after_release'
}

