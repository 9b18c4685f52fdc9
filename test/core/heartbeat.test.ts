import { afterAll, describe, expect, test } from 'vitest'
import { Heartbeat } from '../../src/core/heartbeat'
import type { Lease, LeaseStore, RenewResult } from '../../src/core/lease-store'
import { makeStore, uniqueProject } from '../support/firestore'
import { expireBehindBack, readLeaseDoc, sleep, waitUntilFree } from '../support/lease-helpers'

const project = uniqueProject('heartbeat')
const store = makeStore(project)
const rival = makeStore(project)
afterAll(() => Promise.all([store.close(), rival.close()]))

async function acquire(resource: string, owner: string, ttlMs: number): Promise<Lease> {
  const r = await store.acquire(resource, owner, { ttlMs })
  if (!r.acquired) throw new Error(`could not acquire ${resource}`)
  return r.lease
}

/** Wraps the real store to count renew calls and when they happen. */
function countingRenewer(inner: Pick<LeaseStore, 'renew'>) {
  const calls: number[] = []
  return {
    calls,
    renew: (...args: Parameters<LeaseStore['renew']>): Promise<RenewResult> => {
      calls.push(performance.now())
      return inner.renew(...args)
    }
  }
}

function lostPromise() {
  let resolve!: (v: { reason: string; at: number }) => void
  const p = new Promise<{ reason: string; at: number }>((r) => (resolve = r))
  return { p, onLost: (reason: string) => resolve({ reason, at: performance.now() }) }
}

describe('Heartbeat against the emulator', () => {
  /**
   * Acquires with a long head start, then hands the heartbeat a short-ttl lease: every renewal then
   * writes the short ttl. Waiting for the first renewal makes the lease a genuine short one without the
   * test depending on how long the first acquire took on a busy machine.
   */
  async function shortLease(res: string, ttlMs: number) {
    const r = await store.acquire(res, 'alice', { ttlMs: 20_000 })
    if (!r.acquired) throw new Error(`could not acquire ${res}`)
    return { ...r.lease, ttlMs }
  }

  function firstRenewal() {
    let resolve!: () => void
    const p = new Promise<void>((r) => (resolve = r))
    return { p, onRenew: () => resolve() }
  }

  test('keeps a lease alive for several ttls while another owner keeps trying', async () => {
    const res = 'hb/alive'
    const ttlMs = 3000
    const lease = await shortLease(res, ttlMs)
    const renewals: Date[] = []
    const trace: string[] = []
    const t0 = performance.now()
    const at = () => Math.round(performance.now() - t0)
    const first = firstRenewal()
    let lostReason: string | undefined
    const hb = new Heartbeat(store, lease, {
      intervalMs: 1000,
      onRenew: (r) => {
        renewals.push(r.expiresAt)
        trace.push(`${at()} renewed until ${r.expiresAt.toISOString()}`)
        first.onRenew()
      },
      onError: (e, n) => trace.push(`${at()} renew error ${n}: ${(e as Error).message}`),
      onLost: (reason) => {
        lostReason = reason
        trace.push(`${at()} lost: ${reason}`)
      }
    }).start()
    await first.p
    const doc1 = await readLeaseDoc(store, res)
    expect(doc1.data!.expiresAt.toMillis() - doc1.data!.renewedAt.toMillis()).toBe(ttlMs)

    const started = performance.now()
    let attempts = 0
    while (performance.now() - started < 3 * ttlMs) {
      const r = await rival.acquire(res, 'bob', { ttlMs })
      if (r.acquired) trace.push(`${at()} bob acquired token ${r.lease.token}`)
      else trace.push(`${at()} bob refused: expires ${r.expiresAt.toISOString()}, server now ${r.serverTime.toISOString()}`)
      expect(r.acquired, `bob acquired after ${Math.round(performance.now() - started)}ms\n${trace.join('\n')}`).toBe(false)
      if (!r.acquired) expect(r.holder).toBe('alice')
      attempts++
      await sleep(200)
    }
    await hb.stop()
    expect(attempts).toBeGreaterThan(5)
    expect(lostReason).toBeUndefined()
    expect(hb.lost).toBe(false)
    expect(hb.signal.aborted).toBe(false)
    expect(hb.stats.renewals, trace.join('\n')).toBeGreaterThanOrEqual(5)
    // Every renewal pushed the server-side expiry further.
    for (let i = 1; i < renewals.length; i++) expect(renewals[i].getTime()).toBeGreaterThan(renewals[i - 1].getTime())
    const doc = await readLeaseDoc(store, res)
    expect(doc.data).toMatchObject({ owner: 'alice', fencing: lease.token, ttlMs })

    // Once the heartbeat stops, the lease lapses by itself (server time) and bob gets it.
    await waitUntilFree(store, res, 3 * ttlMs)
    const b = await rival.acquire(res, 'bob', { ttlMs })
    expect(b.acquired).toBe(true)
  })

  test('reports loss within one ttl when the lease is taken over behind its back, then never renews', async () => {
    const res = 'hb/taken-over'
    const ttlMs = 3000
    const lease = await shortLease(res, ttlMs)
    const renewer = countingRenewer(store)
    const lost = lostPromise()
    const first = firstRenewal()
    const hb = new Heartbeat(renewer, lease, { intervalMs: 1000, onLost: lost.onLost, onRenew: first.onRenew }).start()
    await first.p

    await expireBehindBack(store, res)
    const b = await rival.acquire(res, 'bob', { ttlMs: 60_000 })
    expect(b.acquired).toBe(true)
    const takenAt = performance.now()

    const { reason, at } = await Promise.race([
      lost.p,
      sleep(3 * ttlMs).then(() => {
        throw new Error('loss was never reported')
      })
    ])
    expect(at - takenAt).toBeLessThan(ttlMs)
    expect(reason).toBe(`taken over by bob with token ${lease.token + 1}`)
    expect(hb.lost).toBe(true)
    expect(hb.signal.aborted).toBe(true)
    expect(String((hb.signal.reason as Error).message)).toContain('lease lost')
    expect(hb.stats.lostReason).toBe(reason)

    // No renewal after the loss, and bob's document is left alone.
    const callsAtLoss = renewer.calls.length
    const docAtLoss = await readLeaseDoc(store, res)
    await sleep(2500)
    expect(renewer.calls.length).toBe(callsAtLoss)
    const doc = await readLeaseDoc(store, res)
    expect(doc.updateTime!.isEqual(docAtLoss.updateTime!)).toBe(true)
    expect(doc.data).toMatchObject({ owner: 'bob', fencing: lease.token + 1 })
    await hb.stop()
  })

  test('reports loss when the lease is released behind its back', async () => {
    const res = 'hb/released'
    const lease = await acquire(res, 'alice', 2000)
    const lost = lostPromise()
    const hb = new Heartbeat(store, lease, { intervalMs: 600, onLost: lost.onLost }).start()
    await store.release(res, 'alice', lease.token)
    const { reason } = await lost.p
    expect(reason).toBe('it was released')
    expect(hb.signal.aborted).toBe(true)
    await hb.stop()
  })
})

describe.concurrent('Heartbeat with a fake store', () => {
  const lease = (ttlMs: number) => ({ resource: 'fake', owner: 'alice', token: 1, ttlMs, deadline: performance.now() + ttlMs })

  test('declares loss at the deadline when renewals hang, and starts no more renewals', async () => {
    const ttlMs = 1500
    let calls = 0
    const hanging = { renew: () => (calls++, new Promise<RenewResult>(() => undefined)) }
    const lost = lostPromise()
    const startedAt = performance.now()
    const hb = new Heartbeat(hanging, lease(ttlMs), { intervalMs: 500, onLost: lost.onLost }).start()
    const { reason, at } = await lost.p
    expect(at - startedAt).toBeGreaterThanOrEqual(ttlMs - 50)
    expect(at - startedAt).toBeLessThan(ttlMs + 1000)
    expect(reason).toBe(`no renewal was confirmed within the ttl (${ttlMs}ms)`)
    expect(hb.signal.aborted).toBe(true)
    await sleep(1500)
    expect(calls).toBe(1)
  })

  test('declares loss at the deadline when renewals keep failing, then stops retrying', async () => {
    const ttlMs = 1500
    const calls: number[] = []
    const errors: number[] = []
    const failing = {
      renew: async (): Promise<RenewResult> => {
        calls.push(performance.now())
        throw new Error('14 UNAVAILABLE')
      }
    }
    const lost = lostPromise()
    const startedAt = performance.now()
    const hb = new Heartbeat(failing, lease(ttlMs), {
      intervalMs: 500,
      onLost: lost.onLost,
      onError: (_e, n) => errors.push(n)
    }).start()
    const { at } = await lost.p
    expect(at - startedAt).toBeLessThan(ttlMs + 1000)
    expect(calls.length).toBeGreaterThanOrEqual(2) // it retried before giving up
    expect(errors).toEqual(calls.map((_, i) => i + 1))
    const n = calls.length
    await sleep(1500)
    expect(calls.length).toBe(n)
    expect(hb.stats).toMatchObject({ lost: true, renewals: 0, failures: n })
  })

  test('a renewal confirmed after the deadline does not revive the lease', async () => {
    const ttlMs = 1200
    let calls = 0
    const slow = {
      renew: async (): Promise<RenewResult> => {
        calls++
        await sleep(2000)
        return { renewed: true, expiresAt: new Date(Date.now() + ttlMs), deadline: performance.now() + ttlMs }
      }
    }
    let lostCount = 0
    let renewCount = 0
    const hb = new Heartbeat(slow, lease(ttlMs), {
      intervalMs: 400,
      onLost: () => lostCount++,
      onRenew: () => renewCount++
    }).start()
    await sleep(3500)
    expect(lostCount).toBe(1)
    expect(renewCount).toBe(0)
    expect(hb.lost).toBe(true)
    expect(calls).toBe(1)
  })

  test('a refused renewal is a loss at once; stop() without loss leaves the signal alone', async () => {
    const refusing = { renew: async (): Promise<RenewResult> => ({ renewed: false, reason: 'taken over by bob with token 2' }) }
    const lost = lostPromise()
    const startedAt = performance.now()
    new Heartbeat(refusing, lease(10_000), { intervalMs: 300, onLost: lost.onLost }).start()
    const { reason, at } = await lost.p
    expect(reason).toBe('taken over by bob with token 2')
    expect(at - startedAt).toBeLessThan(1500)

    const fine = { renew: async (): Promise<RenewResult> => ({ renewed: true, expiresAt: new Date(), deadline: performance.now() + 10_000 }) }
    const hb = new Heartbeat(fine, lease(10_000), { intervalMs: 300 }).start()
    await sleep(700)
    await hb.stop()
    const renewals = hb.stats.renewals
    expect(renewals).toBeGreaterThanOrEqual(1)
    await sleep(700)
    expect(hb.stats.renewals).toBe(renewals)
    expect(hb.signal.aborted).toBe(false)
  })
})

describe('stopping', () => {
  test('stop() does not wait forever for a renewal hung on the network', async () => {
    let calls = 0
    const hung: Pick<LeaseStore, 'renew'> = {
      renew: () => {
        calls++
        return new Promise<RenewResult>(() => undefined)
      }
    }
    const lease = { resource: 'r', owner: 'o', token: 1, ttlMs: 60_000, deadline: performance.now() + 60_000 }
    const hb = new Heartbeat(hung, lease, { intervalMs: 300 }).start()
    await sleep(600)
    expect(calls).toBe(1)
    const started = performance.now()
    await hb.stop(500)
    expect(performance.now() - started).toBeLessThan(2000)
    expect(hb.lost).toBe(false)
  })
})
