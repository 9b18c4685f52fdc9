import { afterAll, describe, expect, test } from 'vitest'
import type { LeaseStore } from '../../src/core/lease-store'
import { makeStore, uniqueProject } from '../support/firestore'
import { auditActions, expireBehindBack, readLeaseDoc, unavailableError, waitUntilFree } from '../support/lease-helpers'

const project = uniqueProject('store')
const store = makeStore(project)
const stores: LeaseStore[] = [store]
afterAll(() => Promise.all(stores.map((s) => s.close())))

function acquired(r: Awaited<ReturnType<LeaseStore['acquire']>>) {
  if (!r.acquired) throw new Error(`expected to acquire, but ${r.holder} holds token ${r.token}`)
  return r.lease
}

describe('fencing tokens strictly increase', () => {
  test('across release, expiry, same-owner re-acquire and takeover', async () => {
    const res = 'tokens/takeovers'
    const a = acquired(await store.acquire(res, 'alice', { ttlMs: 30_000 }))
    expect(a.token).toBe(1)
    expect(a.previousOwner).toBeUndefined()

    // release, then another owner
    expect(await store.release(res, 'alice', 1)).toEqual({ released: true, token: 1, wasExpired: false })
    expect((await store.status(res)).token).toBe(1) // the counter survives a release
    const b = acquired(await store.acquire(res, 'bob', { ttlMs: 1000 }))
    expect(b.token).toBe(2)
    expect(b).toMatchObject({ previousOwner: 'alice', previousExpired: false })

    // expiry (by the server's clock), then another owner
    await waitUntilFree(store, res)
    const c = acquired(await store.acquire(res, 'carol', { ttlMs: 30_000 }))
    expect(c.token).toBe(3)
    expect(c).toMatchObject({ previousOwner: 'bob', previousExpired: true })

    // same owner re-acquiring its live lease still gets a new token
    const c2 = acquired(await store.acquire(res, 'carol', { ttlMs: 30_000 }))
    expect(c2.token).toBe(4)
    // ...and the old token is dead: it can neither renew nor pass the gate
    expect(await store.renew(res, 'carol', 3, 30_000)).toMatchObject({ renewed: false })

    // same owner after its own release
    expect(await store.release(res, 'carol', 4)).toMatchObject({ released: true })
    expect(acquired(await store.acquire(res, 'carol', { ttlMs: 30_000 })).token).toBe(5)

    // expiry behind the holder's back, then a takeover
    await expireBehindBack(store, res)
    const d = acquired(await store.acquire(res, 'dave', { ttlMs: 30_000 }))
    expect(d.token).toBe(6)
    expect(d).toMatchObject({ previousOwner: 'carol', previousExpired: true })

    const doc = await readLeaseDoc(store, res)
    expect(doc.data).toMatchObject({ owner: 'dave', fencing: 6, releasedAt: null })
    const audit = await auditActions(store, res)
    expect(audit.map((x) => [x.action, x.fencing])).toEqual([
      ['acquire', 1],
      ['release', 1],
      ['acquire_after_release', 2],
      ['takeover_expired', 3],
      ['acquire', 4],
      ['release', 4],
      ['acquire', 5],
      ['takeover_expired', 6]
    ])
  })

  test('a busy lease is not touched by a refused acquirer', async () => {
    const res = 'tokens/busy'
    acquired(await store.acquire(res, 'alice', { ttlMs: 30_000 }))
    const before = await readLeaseDoc(store, res)
    const r = await store.acquire(res, 'bob', { ttlMs: 30_000, holder: { run: 'x' } })
    expect(r).toMatchObject({ acquired: false, holder: 'alice', token: 1 })
    if (r.acquired) return
    expect(r.expiresAt.getTime()).toBeGreaterThan(r.serverTime.getTime())
    const after = await readLeaseDoc(store, res)
    expect(after.updateTime!.isEqual(before.updateTime!)).toBe(true)
    expect(after.data).toEqual(before.data)
  })

  test('the expiry written is server time + ttl', async () => {
    const res = 'tokens/expiry'
    const l = acquired(await store.acquire(res, 'alice', { ttlMs: 7000 }))
    const doc = await readLeaseDoc(store, res)
    expect(doc.data!.expiresAt.toMillis() - doc.data!.acquiredAt.toMillis()).toBe(7000)
    expect(l.expiresAt.getTime()).toBe(doc.data!.expiresAt.toMillis())
  })
})

describe('renew and release by anyone but the holder change nothing', () => {
  async function expectUnchanged(res: string, action: () => Promise<unknown>) {
    const before = await readLeaseDoc(store, res)
    const auditBefore = (await auditActions(store, res)).length
    await action()
    const after = await readLeaseDoc(store, res)
    expect(after.exists).toBe(before.exists)
    if (before.exists) expect(after.updateTime!.isEqual(before.updateTime!)).toBe(true)
    expect(after.data).toEqual(before.data)
    expect((await auditActions(store, res)).length).toBe(auditBefore)
  }

  test('a non-owner and an old token are refused while the holder is live', async () => {
    const res = 'strangers/live'
    acquired(await store.acquire(res, 'alice', { ttlMs: 30_000 }))
    await store.release(res, 'alice', 1)
    const a = acquired(await store.acquire(res, 'alice', { ttlMs: 30_000 }))
    expect(a.token).toBe(2)

    await expectUnchanged(res, async () => {
      expect(await store.renew(res, 'mallory', 2, 60_000)).toEqual({
        renewed: false,
        reason: 'taken over by alice with token 2'
      })
    })
    await expectUnchanged(res, async () => {
      expect(await store.renew(res, 'alice', 1, 60_000)).toMatchObject({ renewed: false })
    })
    await expectUnchanged(res, async () => {
      expect(await store.renew(res, 'alice', 3, 60_000)).toMatchObject({ renewed: false })
    })
    await expectUnchanged(res, async () => {
      expect(await store.release(res, 'mallory', 2)).toEqual({
        released: false,
        reason: 'now held by alice with token 2; left untouched'
      })
    })
    await expectUnchanged(res, async () => {
      expect(await store.release(res, 'alice', 1)).toMatchObject({ released: false })
    })
    // The holder itself still can.
    expect(await store.renew(res, 'alice', 2, 30_000)).toMatchObject({ renewed: true })
  })

  test('the previous holder changes nothing after a takeover', async () => {
    const res = 'strangers/takeover'
    acquired(await store.acquire(res, 'alice', { ttlMs: 30_000 }))
    await expireBehindBack(store, res)
    acquired(await store.acquire(res, 'bob', { ttlMs: 30_000 }))
    await expectUnchanged(res, async () => {
      expect(await store.renew(res, 'alice', 1, 30_000)).toMatchObject({ renewed: false, reason: 'taken over by bob with token 2' })
      expect(await store.release(res, 'alice', 1)).toMatchObject({ released: false })
    })
  })

  test('an expired holder cannot renew its way back', async () => {
    const res = 'strangers/expired'
    acquired(await store.acquire(res, 'alice', { ttlMs: 30_000 }))
    await expireBehindBack(store, res)
    await expectUnchanged(res, async () => {
      const r = await store.renew(res, 'alice', 1, 30_000)
      expect(r.renewed).toBe(false)
      if (!r.renewed) expect(r.reason).toMatch(/^it expired at /)
    })
    expect((await store.status(res)).live).toBe(false)
  })

  test('a released holder cannot renew, and releasing twice is refused', async () => {
    const res = 'strangers/released'
    acquired(await store.acquire(res, 'alice', { ttlMs: 30_000 }))
    expect(await store.release(res, 'alice', 1)).toMatchObject({ released: true })
    await expectUnchanged(res, async () => {
      expect(await store.renew(res, 'alice', 1, 30_000)).toEqual({ renewed: false, reason: 'it was released' })
      expect(await store.release(res, 'alice', 1)).toEqual({ released: false, reason: 'already released' })
    })
  })

  test('nothing is created for a resource that was never held', async () => {
    const res = 'strangers/never'
    await expectUnchanged(res, async () => {
      expect(await store.renew(res, 'alice', 1, 30_000)).toEqual({ renewed: false, reason: 'the lease document does not exist' })
      expect(await store.release(res, 'alice', 1)).toMatchObject({ released: false })
    })
    expect((await readLeaseDoc(store, res)).exists).toBe(false)
  })
})

describe('a commit whose reply was lost', () => {
  function flaky(op: 'acquire' | 'renew' | 'release', times = 1) {
    const calls: string[] = []
    let left = times
    const s = makeStore(project, {
      faults: {
        afterCommit(o) {
          calls.push(o)
          if (o === op && left > 0) {
            left--
            throw unavailableError()
          }
        }
      }
    })
    stores.push(s)
    return { s, calls }
  }

  test('acquire returns the token it wrote (1, not 2), with one write and one nonce', async () => {
    const res = 'lost-reply/acquire'
    const { s, calls } = flaky('acquire')
    const l = acquired(await s.acquire(res, 'alice', { ttlMs: 30_000 }))
    expect(l.token).toBe(1)
    expect(calls).toEqual(['acquire']) // the retry recognised its own write and wrote nothing more
    const doc = await readLeaseDoc(store, res)
    expect(doc.data).toMatchObject({ owner: 'alice', fencing: 1 })
    expect(doc.data!.nonce).toEqual(expect.any(String))
    expect((await auditActions(store, res)).map((a) => [a.action, a.fencing])).toEqual([['acquire', 1]])
    expect(l.expiresAt.getTime()).toBe(doc.data!.expiresAt.toMillis())
    // The recognised lease is fully usable.
    expect(await s.renew(res, 'alice', 1, 30_000)).toMatchObject({ renewed: true })
    expect(await store.passGate(res, 'alice', 1)).toMatchObject({ token: 1 })
  })

  test('acquire over an earlier holder returns previous + 1, not previous + 2', async () => {
    const res = 'lost-reply/acquire-again'
    acquired(await store.acquire(res, 'alice', { ttlMs: 30_000 }))
    await store.release(res, 'alice', 1)
    const { s } = flaky('acquire')
    const l = acquired(await s.acquire(res, 'bob', { ttlMs: 30_000 }))
    expect(l.token).toBe(2)
    expect((await readLeaseDoc(store, res)).data).toMatchObject({ owner: 'bob', fencing: 2 })
    expect((await auditActions(store, res)).map((a) => a.fencing)).toEqual([1, 1, 2])
  })

  test('renew is harmless: still held, same token, later expiry', async () => {
    const res = 'lost-reply/renew'
    const l = acquired(await store.acquire(res, 'alice', { ttlMs: 5000 }))
    const nonce = (await readLeaseDoc(store, res)).data!.nonce
    const { s, calls } = flaky('renew')
    const r = await s.renew(res, 'alice', 1, 20_000)
    expect(r).toMatchObject({ renewed: true })
    expect(calls.filter((c) => c === 'renew').length).toBeGreaterThanOrEqual(1)
    const doc = await readLeaseDoc(store, res)
    expect(doc.data).toMatchObject({ owner: 'alice', fencing: 1, nonce, ttlMs: 20_000 })
    expect(doc.data!.expiresAt.toMillis()).toBeGreaterThan(l.expiresAt.getTime())
    if (r.renewed) expect(r.expiresAt.getTime()).toBe(doc.data!.expiresAt.toMillis())
    expect((await auditActions(store, res)).map((a) => a.action)).toEqual(['acquire'])
  })

  test('release is harmless and reports the release it made', async () => {
    const res = 'lost-reply/release'
    acquired(await store.acquire(res, 'alice', { ttlMs: 30_000 }))
    const { s } = flaky('release')
    const r = await s.release(res, 'alice', 1)
    expect(r).toEqual({ released: true, token: 1, wasExpired: false })
    const doc = await readLeaseDoc(store, res)
    expect(doc.data).toMatchObject({ owner: 'alice', fencing: 1, releasedBy: 'alice' })
    expect(doc.data!.releasedAt).toBeTruthy()
    expect((await store.status(res)).live).toBe(false)
    expect((await auditActions(store, res)).map((a) => a.action)).toEqual(['acquire', 'release'])
    // and the next owner gets the next token
    expect(acquired(await store.acquire(res, 'bob', { ttlMs: 30_000 })).token).toBe(2)
  })
})
