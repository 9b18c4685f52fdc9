import { afterAll, beforeEach, describe, expect, test } from 'vitest'
import { acquireWithPolicy } from '../../src/core/acquire'
import type { LeaseStore } from '../../src/core/lease-store'
import { liveTicketCount } from '../../src/core/queue'
import { makeStore, reset, uniqueProject } from '../support/firestore'
import { sleep } from '../support/lease-helpers'

const project = uniqueProject('queue')
const stores: LeaseStore[] = []
// Each waiter gets its own client, as separate jobs would.
const client = () => {
  const s = makeStore(project)
  stores.push(s)
  return s
}
const admin = client()
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()))
})
beforeEach(() => reset(project))

async function untilTickets(resource: string, n: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await liveTicketCount(admin, resource)) >= n) return
    await sleep(25)
  }
  throw new Error(`queue of ${resource} never reached ${n} tickets`)
}

describe('FIFO wait queue', () => {
  test('five waiters get the lease in the order they queued', async () => {
    const r = 'fifo/repo'
    const holder = await admin.acquire(r, 'holder', { ttlMs: 20_000 })
    expect(holder.acquired).toBe(true)
    const order: string[] = []
    const waiters: Promise<void>[] = []
    for (let i = 0; i < 5; i++) {
      const store = client()
      const name = `w${i}`
      waiters.push(
        acquireWithPolicy(store, r, name, { onBusy: 'wait', ttlMs: 5000, waitTimeoutMs: 60_000, pollMs: 2000 }).then(async (got) => {
          expect(got.acquired).toBe(true)
          if (!got.acquired) return
          order.push(name)
          await sleep(150)
          await store.release(r, name, got.lease.token)
        })
      )
      await untilTickets(r, i + 1) // the next waiter queues strictly after this one
    }
    await admin.release(r, 'holder', 1)
    await Promise.all(waiters)
    expect(order).toEqual(['w0', 'w1', 'w2', 'w3', 'w4'])
    // Tickets are gone once everyone is served; the counter went 1 (holder) .. 6.
    expect(await liveTicketCount(admin, r)).toBe(0)
    expect((await admin.status(r)).token).toBe(6)
  })

  test('a release hands over to the waiter well under a second (listener, not the poll)', async () => {
    const r = 'fifo/handover'
    await admin.acquire(r, 'holder', { ttlMs: 30_000 })
    const store = client()
    // A 10 s poll period: only the listener can make the handover fast.
    const waiting = acquireWithPolicy(store, r, 'next', { onBusy: 'wait', ttlMs: 5000, pollMs: 10_000, waitTimeoutMs: 30_000 })
    await untilTickets(r, 1)
    await sleep(300)
    const released = performance.now()
    await admin.release(r, 'holder', 1)
    const got = await waiting
    const latency = performance.now() - released
    expect(got.acquired).toBe(true)
    expect(latency).toBeLessThan(1000)
  })

  test('a waiter that disappears is skipped one ttl later', async () => {
    const r = 'fifo/ghost'
    await admin.acquire(r, 'holder', { ttlMs: 30_000 })
    // A ticket nobody heartbeats (its waiter died): ttl 1s.
    await admin.leaseRef(r).collection('queue').doc('ghost').create({
      owner: 'ghost',
      createdAt: new Date(Date.now() - 60_000),
      heartbeatAt: new Date(Date.now() - 60_000),
      ttlMs: 1000,
      mode: 'fifo',
      cancelled: false
    })
    const store = client()
    const waiting = acquireWithPolicy(store, r, 'alive', { onBusy: 'wait', ttlMs: 3000, waitTimeoutMs: 20_000 })
    await untilTickets(r, 1)
    await admin.release(r, 'holder', 1)
    const got = await waiting
    expect(got.acquired).toBe(true)
  })

  test('supersede: a newer waiter cancels the older waiting ticket, which gives up without the lease', async () => {
    const r = 'fifo/supersede'
    await admin.acquire(r, 'holder', { ttlMs: 30_000 })
    const older = acquireWithPolicy(client(), r, 'older', { onBusy: 'supersede', ttlMs: 5000, waitTimeoutMs: 30_000 })
    await untilTickets(r, 1)
    const newerStore = client()
    const newer = acquireWithPolicy(newerStore, r, 'newer', { onBusy: 'supersede', ttlMs: 5000, waitTimeoutMs: 30_000 })
    const o = await older
    expect(o.acquired).toBe(false)
    if (!o.acquired) expect(o.supersededBy).toBe('newer')
    await admin.release(r, 'holder', 1)
    const n = await newer
    expect(n.acquired).toBe(true)
    if (n.acquired) expect(n.lease.token).toBe(2)
  })

  test('a newcomer with on-busy wait does not jump a queue while the lease is momentarily free', async () => {
    const r = 'fifo/nojump'
    await admin.acquire(r, 'holder', { ttlMs: 30_000 })
    const first = acquireWithPolicy(client(), r, 'first', { onBusy: 'wait', ttlMs: 5000, pollMs: 5000, waitTimeoutMs: 30_000 })
    await untilTickets(r, 1)
    const order: string[] = []
    const late = client()
    const second = acquireWithPolicy(late, r, 'second', { onBusy: 'wait', ttlMs: 5000, waitTimeoutMs: 30_000 })
    await untilTickets(r, 2)
    await admin.release(r, 'holder', 1)
    const f = await first
    order.push('first')
    if (f.acquired) await admin.release(r, 'first', f.lease.token)
    const s = await second
    order.push('second')
    expect(f.acquired && s.acquired).toBe(true)
    expect(order).toEqual(['first', 'second'])
    if (f.acquired && s.acquired) expect(s.lease.token).toBe(f.lease.token + 1)
  })
})
