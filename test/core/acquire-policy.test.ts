import { afterAll, describe, expect, test } from 'vitest'
import { acquireWithPolicy, describeBusy } from '../../src/core/acquire'
import { LeaseBusyError, WaitTimeoutError } from '../../src/core/errors'
import { makeStore, uniqueProject } from '../support/firestore'
import { readLeaseDoc, sleep } from '../support/lease-helpers'

const project = uniqueProject('policy')
const store = makeStore(project)
const other = makeStore(project)
afterAll(() => Promise.all([store.close(), other.close()]))

async function holdAs(resource: string, owner: string, ttlMs = 30_000) {
  const r = await store.acquire(resource, owner, { ttlMs, holder: { runUrl: 'https://ci.example/run/7', host: 'box-1' } })
  if (!r.acquired) throw new Error(`${owner} could not acquire ${resource}`)
  return r.lease
}

describe('acquireWithPolicy', () => {
  test('a free lease is taken at once under every policy', async () => {
    for (const onBusy of ['skip', 'fail', 'wait'] as const) {
      const res = `policy/free-${onBusy}`
      const r = await acquireWithPolicy(other, res, 'bob', { onBusy, ttlMs: 30_000 })
      expect(r).toMatchObject({ acquired: true, waitedMs: 0 })
      if (r.acquired) expect(r.lease.token).toBe(1)
    }
  })

  test('skip returns who holds it and writes nothing', async () => {
    const res = 'policy/skip'
    await holdAs(res, 'alice')
    const before = await readLeaseDoc(store, res)
    const r = await acquireWithPolicy(other, res, 'bob', { onBusy: 'skip', ttlMs: 30_000 })
    expect(r.acquired).toBe(false)
    if (r.acquired) return
    expect(r.busy).toMatchObject({
      resource: res,
      holder: 'alice',
      token: 1,
      holderMeta: { runUrl: 'https://ci.example/run/7', host: 'box-1' }
    })
    expect(r.busy.expiresAt.getTime()).toBeGreaterThan(r.busy.serverTime.getTime())
    expect(describeBusy(r.busy)).toMatch(/^"policy\/skip" is held by alice \(https:\/\/ci\.example\/run\/7\) with token 1, expiring in \d/)
    const after = await readLeaseDoc(store, res)
    expect(after.updateTime!.isEqual(before.updateTime!)).toBe(true)
  })

  test('fail throws LeaseBusyError naming the holder and writes nothing', async () => {
    const res = 'policy/fail'
    await holdAs(res, 'alice')
    const before = await readLeaseDoc(store, res)
    const err = await acquireWithPolicy(other, res, 'bob', { onBusy: 'fail', ttlMs: 30_000 }).catch((e) => e)
    expect(err).toBeInstanceOf(LeaseBusyError)
    expect(err.code).toBe('lease_busy')
    expect(err.message).toContain('held by alice')
    expect(err.message).toContain('on-busy is fail')
    const after = await readLeaseDoc(store, res)
    expect(after.updateTime!.isEqual(before.updateTime!)).toBe(true)
  })

  test('wait takes the lease soon after the holder releases: the listener wakes it, not the poll', async () => {
    const res = 'policy/wait-release'
    const a = await holdAs(res, 'alice', 60_000)
    const waiting = acquireWithPolicy(other, res, 'bob', {
      onBusy: 'wait',
      ttlMs: 30_000,
      waitTimeoutMs: 30_000,
      pollMs: 20_000 // the fallback poll alone would take far longer than the bound below
    })
    let settled = false
    waiting.finally(() => (settled = true)).catch(() => undefined)
    await sleep(1500)
    expect(settled).toBe(false) // still waiting while alice holds it
    expect((await readLeaseDoc(store, res)).data).toMatchObject({ owner: 'alice' })

    const releasedAt = performance.now()
    expect(await store.release(res, 'alice', a.token)).toMatchObject({ released: true })
    const r = await waiting
    const after = performance.now() - releasedAt
    expect(r.acquired).toBe(true)
    if (!r.acquired) return
    expect(after).toBeLessThan(3000)
    expect(r.lease).toMatchObject({ owner: 'bob', token: 2, previousOwner: 'alice', previousExpired: false })
    expect(r.waitedMs).toBeGreaterThanOrEqual(1400)
    expect((await readLeaseDoc(store, res)).data).toMatchObject({ owner: 'bob', fencing: 2 })
  })

  test('wait takes over a lease whose holder vanished, right after it expires by the server clock', async () => {
    const res = 'policy/wait-expiry'
    await holdAs(res, 'alice', 2000)
    const started = performance.now()
    const r = await acquireWithPolicy(other, res, 'bob', { onBusy: 'wait', ttlMs: 30_000, waitTimeoutMs: 20_000, pollMs: 20_000 })
    expect(r.acquired).toBe(true)
    if (!r.acquired) return
    expect(r.lease).toMatchObject({ token: 2, previousOwner: 'alice', previousExpired: true })
    expect(performance.now() - started).toBeLessThan(2000 + 3000)
  })

  test('wait gives up with WaitTimeoutError after the timeout, leaving the holder alone', async () => {
    const res = 'policy/wait-timeout'
    await holdAs(res, 'alice', 60_000)
    const before = await readLeaseDoc(store, res)
    const started = performance.now()
    const progress: number[] = []
    const err = await acquireWithPolicy(other, res, 'bob', {
      onBusy: 'wait',
      ttlMs: 30_000,
      waitTimeoutMs: 1500,
      pollMs: 300,
      progressEveryMs: 500,
      onWaiting: (_b, waited) => progress.push(waited)
    }).catch((e) => e)
    const took = performance.now() - started
    expect(err).toBeInstanceOf(WaitTimeoutError)
    expect(err.code).toBe('wait_timeout')
    expect(err.message).toMatch(/^waited 1\.\d+s for "policy\/wait-timeout" is held by alice/)
    expect(err.message).toContain('raise wait-timeout')
    expect(took).toBeGreaterThanOrEqual(1500)
    expect(took).toBeLessThan(1500 + 3000)
    expect(progress.length).toBeGreaterThanOrEqual(1)
    const after = await readLeaseDoc(store, res)
    expect(after.updateTime!.isEqual(before.updateTime!)).toBe(true)
  })

  test('an aborted wait stops with WaitTimeoutError', async () => {
    const res = 'policy/wait-abort'
    await holdAs(res, 'alice', 60_000)
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 500)
    const started = performance.now()
    const err = await acquireWithPolicy(other, res, 'bob', {
      onBusy: 'wait',
      ttlMs: 30_000,
      waitTimeoutMs: 30_000,
      pollMs: 20_000,
      signal: ac.signal
    }).catch((e) => e)
    expect(err).toBeInstanceOf(WaitTimeoutError)
    expect(err.message).toMatch(/^stopped waiting for "policy\/wait-abort"/)
    expect(performance.now() - started).toBeLessThan(5000)
  })
})
