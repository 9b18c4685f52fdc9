import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { makeStore, uniqueProject } from '../support/firestore'
import { readLeaseDoc, waitUntilFree } from '../support/lease-helpers'
import { JsonLines, ROOT, SUPPORT, spawnNode } from '../support/procs'

/**
 * Expiry is decided by the server's clock only. A contender whose wall clock is an hour ahead must not
 * see a live lease as expired, and one an hour behind must not see an expired lease as live. Each runs
 * as a separate process whose Date is shifted by a --require preload (no faketime needed).
 */
const HOUR = 3_600_000
const project = uniqueProject('skew')
const store = makeStore(project)
afterAll(() => store.close())

interface WorkerOut {
  ready?: boolean
  wallNow: number
  acquired?: boolean
  holder?: string
  token?: number
  expiresAt?: number
  acquiredAt?: number
  error?: string
}

/** Runs one skewed process that acquires `resource` once as `owner`. */
async function acquireFromSkewedProcess(skewMs: number, resource: string, owner: string, ttlMs: number) {
  // The sources (through tsx), not the bundle: this is where expiry is decided.
  const child = spawnNode(join(SUPPORT, 'acquire-worker.cjs'), {
    tsx: true,
    preload: [join(SUPPORT, 'skew-clock.cjs')],
    env: {
      LF_IMPL: join(ROOT, 'src/core/lease-store.ts'),
      LF_PROJECT: project,
      LF_RESOURCE: resource,
      LF_OWNER: owner,
      LF_TTL_MS: String(ttlMs),
      LEASEFENCE_TEST_CLOCK_SKEW_MS: String(skewMs)
    }
  })
  const lines = new JsonLines<WorkerOut>(child)
  try {
    const ready = await lines.next(30_000)
    // The preload took effect: this process's wall clock is off by the skew.
    expect(Math.abs(ready.wallNow - Date.now() - skewMs)).toBeLessThan(10_000)
    child.stdin!.write(JSON.stringify({ round: 1, at: 0 }) + '\n')
    const out = await lines.next(30_000)
    expect(out.error).toBeUndefined()
    return out
  } finally {
    child.stdin!.end()
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)))
  }
}

describe('expiry is decided on server time', () => {
  test('a process whose clock is 1 h ahead cannot steal a live lease', async () => {
    const res = 'skew/ahead'
    const a = await store.acquire(res, 'alice', { ttlMs: 60_000 })
    expect(a.acquired).toBe(true)
    const before = await readLeaseDoc(store, res)

    const out = await acquireFromSkewedProcess(+HOUR, res, 'future-runner', 60_000)
    expect(out).toMatchObject({ acquired: false, holder: 'alice', token: 1 })

    const after = await readLeaseDoc(store, res)
    expect(after.updateTime!.isEqual(before.updateTime!)).toBe(true)
    expect(after.data).toEqual(before.data)
  })

  test('a process whose clock is 1 h behind takes an expired lease, and its expiry is server time + ttl', async () => {
    const res = 'skew/behind'
    const a = await store.acquire(res, 'alice', { ttlMs: 1000 })
    expect(a.acquired).toBe(true)
    await waitUntilFree(store, res)

    const out = await acquireFromSkewedProcess(-HOUR, res, 'past-runner', 30_000)
    expect(out).toMatchObject({ acquired: true, token: 2 })

    const doc = await readLeaseDoc(store, res)
    expect(doc.data).toMatchObject({ owner: 'past-runner', fencing: 2 })
    // Written from the server's clock: within seconds of real now, not an hour off.
    expect(Math.abs(doc.data!.acquiredAt.toMillis() - doc.readTime.toMillis())).toBeLessThan(30_000)
    expect(doc.data!.expiresAt.toMillis() - doc.data!.acquiredAt.toMillis()).toBe(30_000)
    expect((await store.status(res)).live).toBe(true)
  })

  test('a process whose clock is 1 h ahead writes a lease that lasts its ttl by the server clock', async () => {
    const res = 'skew/ahead-free'
    const out = await acquireFromSkewedProcess(+HOUR, res, 'future-runner', 30_000)
    expect(out).toMatchObject({ acquired: true, token: 1 })
    const doc = await readLeaseDoc(store, res)
    expect(Math.abs(doc.data!.acquiredAt.toMillis() - doc.readTime.toMillis())).toBeLessThan(30_000)
    expect(doc.data!.expiresAt.toMillis() - doc.data!.acquiredAt.toMillis()).toBe(30_000)
    // ...so a correct-clock contender finds it live.
    expect(await store.acquire(res, 'alice', { ttlMs: 30_000 })).toMatchObject({ acquired: false, holder: 'future-runner' })
  })
})
