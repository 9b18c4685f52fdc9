import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { acquireLease } from '../../src/core/acquisition'
import { acquireSlot, slotEnvLines, slotValues, validateLayout, DEFAULT_SLOT_LAYOUT } from '../../src/core/slots'
import { forceRelease, listLeases, readAudit, reapAbandoned } from '../../src/core/operations'
import { holderRunLiveness } from '../../src/core/liveness'
import { slotResource } from '../../src/core/resource-id'
import { ValidationError } from '../../src/core/errors'
import { setLogSink } from '../../src/core/log'
import { makeStore, reset, uniqueProject } from '../support/firestore'
import { expireBehindBack, readLeaseDoc } from '../support/lease-helpers'
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github'

const project = uniqueProject('ops')
const store = makeStore(project)
const other = makeStore(project)
let gh: FakeGitHub
const logged: string[] = []
beforeAll(async () => {
  gh = await startFakeGitHub()
  setLogSink((l) => logged.push(l))
})
afterAll(async () => {
  await gh.close()
  await store.close()
  await other.close()
})
beforeEach(async () => {
  await reset(project)
  logged.length = 0
})

const runMeta = (runId: string) => ({ repository: 'acme/site', runId, runAttempt: '1', runUrl: `https://gh/acme/site/actions/runs/${runId}` })

describe('N-slot leases', () => {
  test('3 slots for 5 jobs: three distinct slots, two skipped, never two owners on one slot', async () => {
    const jobs = await Promise.all(
      Array.from({ length: 5 }, (_, i) => {
        const s = makeStore(project)
        return acquireSlot(s, 'env/preview', 3, `job${i}`, { onBusy: 'skip', ttlMs: 10_000 }).finally(() => s.close())
      })
    )
    const won = jobs.filter((j) => j.acquired)
    expect(won).toHaveLength(3)
    const slots = won.map((j) => (j.acquired ? j.slot : -1)).sort()
    expect(slots).toEqual([0, 1, 2])
    for (let i = 0; i < 3; i++) {
      const d = await readLeaseDoc(store, slotResource('env/preview', i))
      expect(d.data?.fencing).toBe(1)
    }
  })

  test('derived values are a pure function of the slot index', () => {
    expect(slotValues(0)).toEqual({ slot: 0, port: 3000, schema: 'agent_0' })
    expect(slotValues(2)).toEqual({ slot: 2, port: 3020, schema: 'agent_2' })
    expect(slotValues(1, { portBase: 8000, portsPerSlot: 5, schemaPrefix: 'ci_' })).toEqual({ slot: 1, port: 8005, schema: 'ci_1' })
    expect(slotEnvLines(slotValues(1), 7)).toBe('LEASE_SLOT=1\nPORT=3010\nDB_SCHEMA=agent_1\nLEASEFENCE_FENCING_TOKEN=7\n')
    expect(() => validateLayout({ ...DEFAULT_SLOT_LAYOUT, schemaPrefix: 'Agent-; DROP' }, 3)).toThrow(ValidationError)
    expect(() => validateLayout({ ...DEFAULT_SLOT_LAYOUT, portBase: 65530 }, 3)).toThrow(/ports up to/)
  })

  test('a restarted job gets its own slot back (same ports), and a crashed slot reports who it took over from', async () => {
    const a = await acquireSlot(store, 'env/re', 3, 'A', { onBusy: 'skip', ttlMs: 10_000 })
    const b = await acquireSlot(store, 'env/re', 3, 'B', { onBusy: 'skip', ttlMs: 10_000 })
    expect(a.acquired && b.acquired && [a.slot, b.slot]).toEqual([0, 1])
    const again = await acquireSlot(store, 'env/re', 3, 'B', { onBusy: 'skip', ttlMs: 10_000 })
    expect(again.acquired && again.slot).toBe(1)
    // A crashes: its slot expires without a release; C takes it over and learns from whom.
    await expireBehindBack(store, slotResource('env/re', 0))
    const c = await acquireSlot(other, 'env/re', 3, 'C', { onBusy: 'skip', ttlMs: 10_000 })
    expect(c.acquired && c.slot).toBe(0)
    if (c.acquired) {
      expect(c.lease.previousOwner).toBe('A')
      expect(c.lease.previousExpired).toBe(true)
    }
  })

  test('waiting for a slot gets the first one released', async () => {
    for (const o of ['A', 'B']) await acquireSlot(store, 'env/w', 2, o, { onBusy: 'skip', ttlMs: 20_000 })
    const waiting = acquireSlot(other, 'env/w', 2, 'C', { onBusy: 'wait', ttlMs: 5000, waitTimeoutMs: 20_000, pollMs: 5000 })
    await new Promise((r) => setTimeout(r, 300))
    await store.release(slotResource('env/w', 1), 'B', 1)
    const got = await waiting
    expect(got.acquired && got.slot).toBe(1)
  })
})

describe('skip counting and stuck locks', () => {
  test('each skip counts against the holder; the threshold raises lock_stuck; a new acquisition resets it', async () => {
    await store.acquire('stuck/r', 'holder', { ttlMs: 30_000 })
    let last
    for (let i = 1; i <= 3; i++) {
      last = await acquireLease(other, { resource: 'stuck/r', owner: `skipper${i}`, onBusy: 'skip', ttlMs: 5000, stuckThreshold: 3 })
      expect(last.acquired).toBe(false)
      if (!last.acquired) expect(last.skip?.skipCount).toBe(i)
    }
    expect(last && !last.acquired && last.stuck?.why).toMatch(/3 runs skipped/)
    expect(logged.some((l) => l.startsWith('leasefence event=lock_stuck') && l.includes('holder="holder"'))).toBe(true)
    const doc = await readLeaseDoc(store, 'stuck/r')
    expect(doc.data?.lastSkippedBy).toBe('skipper3')
    await store.release('stuck/r', 'holder', 1)
    await store.acquire('stuck/r', 'next', { ttlMs: 5000 })
    expect((await readLeaseDoc(store, 'stuck/r')).data?.skipCount).toBe(0)
  })

  test('max-hold: a holder that has held it too long is reported stuck on the first skip', async () => {
    await store.acquire('stuck/long', 'holder', { ttlMs: 30_000 })
    await new Promise((r) => setTimeout(r, 1200))
    const got = await acquireLease(other, { resource: 'stuck/long', owner: 'x', onBusy: 'skip', ttlMs: 5000, maxHoldMs: 1000 })
    expect(!got.acquired && got.stuck?.why).toMatch(/longer than max-hold/)
  })
})

describe('liveness-aware takeover', () => {
  test("a holder whose GitHub run completed is taken over at once (token + 1), and it's audited", async () => {
    await store.acquire('live/r', 'old-job', { ttlMs: 60_000, holder: runMeta('111') })
    gh.runs.set('111/1', { status: 'completed', conclusion: 'cancelled' })
    const got = await acquireLease(other, {
      resource: 'live/r',
      owner: 'new-job',
      onBusy: 'skip',
      ttlMs: 5000,
      liveness: { token: 'ghs_test', apiUrl: gh.url }
    })
    expect(got.acquired).toBe(true)
    if (got.acquired) {
      expect(got.lease.token).toBe(2)
      expect(got.takeover).toMatchObject({ from: 'old-job', token: 1, why: 'run-completed' })
    }
    expect(gh.requests.some((r) => r.includes('/repos/acme/site/actions/runs/111/attempts/1') && r.includes('ghs_test'))).toBe(true)
    const audit = await readAudit(store, 'live/r')
    expect(audit.map((a) => a.action)).toContain('takeover_stale_run')
  })

  test('no takeover while the run is in progress, nor when the API errors or rate-limits', async () => {
    for (const [runId, answer] of [['222', { status: 'in_progress' }], ['333', 500], ['444', 403]] as const) {
      const r = `live/${runId}`
      await store.acquire(r, 'holder', { ttlMs: 60_000, holder: runMeta(runId) })
      gh.runs.set(`${runId}/1`, answer)
      const got = await acquireLease(other, { resource: r, owner: 'newcomer', onBusy: 'skip', ttlMs: 5000, liveness: { token: 't', apiUrl: gh.url } })
      expect(got.acquired).toBe(false)
      const doc = await readLeaseDoc(store, r)
      expect(doc.data?.owner).toBe('holder')
      expect(doc.data?.fencing).toBe(1)
    }
    // A holder without run metadata is never checked.
    expect(await holderRunLiveness({}, { token: 't', apiUrl: gh.url })).toMatchObject({ state: 'unknown' })
    // An unreachable API is "unknown" too.
    expect((await holderRunLiveness(runMeta('1'), { token: 't', apiUrl: 'http://127.0.0.1:9' })).state).toBe('unknown')
  })
})

describe('forced release and audit trail', () => {
  test('expires the live lease, keeps the counter, audits reason and actor; the old holder can no longer renew or publish', async () => {
    const a = await store.acquire('force/r', 'stuck-holder', { ttlMs: 60_000 })
    expect(a.acquired).toBe(true)
    await expect(forceRelease(store, 'force/r', { reason: ' ', actor: 'ops' })).rejects.toThrow(/needs a reason/)
    const r = await forceRelease(other, 'force/r', { reason: 'runner died, INC-1', actor: 'alice' })
    expect(r).toMatchObject({ released: true, previousOwner: 'stuck-holder', token: 1, wasLive: true })
    expect(await store.renew('force/r', 'stuck-holder', 1, 60_000)).toMatchObject({ renewed: false })
    await expect(store.passGate('force/r', 'stuck-holder', 1)).rejects.toThrow(/lost/)
    const next = await other.acquire('force/r', 'next', { ttlMs: 5000 })
    expect(next.acquired && next.lease.token).toBe(2)
    const audit = await readAudit(store, 'force/r')
    const forced = audit.find((x) => x.action === 'force_release')
    expect(forced).toMatchObject({ previousOwner: 'stuck-holder', fencing: 1, reason: 'runner died, INC-1', actor: 'alice' })
    expect(audit.map((x) => x.action).sort()).toEqual(['acquire', 'acquire_after_release', 'force_release'].sort())
  })

  test('reap marks abandoned (expired, never released) leases and leaves live and released ones alone', async () => {
    await store.acquire('reap/crashed', 'dead', { ttlMs: 60_000 })
    await expireBehindBack(store, 'reap/crashed')
    await store.acquire('reap/live', 'alive', { ttlMs: 60_000 })
    await store.acquire('reap/done', 'done', { ttlMs: 60_000 })
    await store.release('reap/done', 'done', 1)
    const before = await listLeases(store)
    expect(before.filter((r) => r.abandoned).map((r) => r.resource)).toEqual(['reap/crashed'])
    const reaped = await reapAbandoned(store, 'ops')
    expect(reaped.map((r) => r.resource)).toEqual(['reap/crashed'])
    expect((await listLeases(store)).filter((r) => r.abandoned)).toEqual([])
    expect((await readAudit(store, 'reap/crashed')).map((a) => a.action)).toContain('reap')
    expect((await readLeaseDoc(store, 'reap/live')).data?.releasedAt).toBeNull()
  })

  test('status rows: holder, token, queue length, skip count, last gate pass', async () => {
    await store.acquire('st/a', 'alpha', { ttlMs: 30_000 })
    await store.passGate('st/a', 'alpha', 1)
    await acquireLease(other, { resource: 'st/a', owner: 'beta', onBusy: 'skip', ttlMs: 5000 })
    const [row] = await listLeases(store, ['st/a'])
    expect(row).toMatchObject({ resource: 'st/a', owner: 'alpha', token: 1, live: true, skipCount: 1, queueLength: 0, gateToken: 1 })
    expect(row.lastGatePassAt).toBeInstanceOf(Date)
    expect(row.expiresInMs).toBeGreaterThan(20_000)
  })
})
