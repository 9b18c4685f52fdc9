import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, test } from 'vitest'
import { LeaseLostError, StaleFencingError, ValidationError } from '../../src/core/errors'
import type { GateDoc } from '../../src/core/lease-store'
import { writeLostMarker } from '../../src/core/local-state'
import { setLogSink } from '../../src/core/log'
import { checkGate, EXIT_FENCED } from '../../src/core/publish'
import { makeStore, uniqueProject } from '../support/firestore'
import { expireBehindBack, waitUntilFree } from '../support/lease-helpers'

const project = uniqueProject('gate')
const store = makeStore(project)
afterAll(() => store.close())

async function token(resource: string, owner: string, ttlMs = 30_000): Promise<number> {
  const r = await store.acquire(resource, owner, { ttlMs })
  if (!r.acquired) throw new Error(`${owner} could not acquire ${resource}`)
  return r.lease.token
}

async function gateDoc(resource: string): Promise<{ data?: GateDoc; updateMs?: number }> {
  const snap = await store.gateRef(resource).get()
  return { data: snap.data() as GateDoc | undefined, updateMs: snap.updateTime?.toMillis() }
}

async function refusal(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (err) {
    return err
  }
  throw new Error('the gate passed, but it should have refused')
}

describe('passGate', () => {
  test('records the token; equal tokens pass again', async () => {
    const res = 'gate/equal'
    const t = await token(res, 'alice')
    const first = await store.passGate(res, 'alice', t)
    expect(first).toMatchObject({ resource: res, token: 1, owner: 'alice', previousToken: 0 })
    expect((await gateDoc(res)).data).toMatchObject({ resource: res, fencing: 1, owner: 'alice', passes: 1 })
    const second = await store.passGate(res, 'alice', t)
    expect(second).toMatchObject({ token: 1, previousToken: 1 })
    const g = await store.gateStatus(res)
    expect(g).toMatchObject({ fencing: 1, owner: 'alice', passes: 2 })
    expect(Math.abs(g!.passedAt.toMillis() - second.passedAt.getTime())).toBeLessThanOrEqual(1)
  })

  test('refuses an older token once a newer one passed (StaleFencingError with the newest token)', async () => {
    const res = 'gate/stale'
    const a = await token(res, 'alice')
    await store.passGate(res, 'alice', a)
    await expireBehindBack(store, res)
    const b = await token(res, 'bob')
    expect(b).toBe(2)
    await store.passGate(res, 'bob', b)
    const before = await gateDoc(res)

    const err = await refusal(store.passGate(res, 'alice', a))
    expect(err).toBeInstanceOf(StaleFencingError)
    expect(err).toMatchObject({ code: 'stale_fencing', token: 1, newestToken: 2, newestOwner: 'bob' })
    expect((err as Error).message).toContain('token 2 (owner bob) already passed the gate')
    const after = await gateDoc(res)
    expect(after).toEqual(before)
  })

  test('refuses a taken-over holder that the new holder has not outrun at the gate yet (LeaseLostError)', async () => {
    const res = 'gate/taken-over'
    const a = await token(res, 'alice')
    await store.passGate(res, 'alice', a)
    await expireBehindBack(store, res)
    await token(res, 'bob') // bob holds token 2 but has not published yet
    const before = await gateDoc(res)
    const err = await refusal(store.passGate(res, 'alice', a))
    expect(err).toBeInstanceOf(LeaseLostError)
    expect(err).toMatchObject({ code: 'lease_lost', reason: 'taken over by bob with token 2' })
    expect(await gateDoc(res)).toEqual(before)
    expect(before.data).toMatchObject({ fencing: 1 })
  })

  test('a holder that never passed is refused after a takeover, and no gate record appears', async () => {
    const res = 'gate/never-passed'
    const a = await token(res, 'alice')
    await expireBehindBack(store, res)
    await token(res, 'bob')
    expect(await refusal(store.passGate(res, 'alice', a))).toBeInstanceOf(LeaseLostError)
    expect((await gateDoc(res)).data).toBeUndefined()
  })

  test('refuses an expired holder (server time) and a released one', async () => {
    const expired = 'gate/expired'
    const a = await token(expired, 'alice', 1000)
    await waitUntilFree(store, expired)
    const e1 = await refusal(store.passGate(expired, 'alice', a))
    expect(e1).toBeInstanceOf(LeaseLostError)
    expect((e1 as LeaseLostError).reason).toMatch(/^it expired at /)

    const released = 'gate/released'
    const b = await token(released, 'alice')
    await store.release(released, 'alice', b)
    const e2 = await refusal(store.passGate(released, 'alice', b))
    expect(e2).toBeInstanceOf(LeaseLostError)
    expect((e2 as LeaseLostError).reason).toBe('it was released')
    expect((await gateDoc(expired)).data).toBeUndefined()
    expect((await gateDoc(released)).data).toBeUndefined()
  })

  test('refuses the right token under the wrong owner, an invented higher token, and a missing lease', async () => {
    const res = 'gate/forged'
    const a = await token(res, 'alice')
    await store.passGate(res, 'alice', a)
    const before = await gateDoc(res)
    expect(await refusal(store.passGate(res, 'mallory', a))).toBeInstanceOf(LeaseLostError)
    // A token nobody was given must not raise the gate (it would lock out the real holder).
    expect(await refusal(store.passGate(res, 'alice', 99))).toBeInstanceOf(LeaseLostError)
    expect(await gateDoc(res)).toEqual(before)
    expect(await store.passGate(res, 'alice', a)).toMatchObject({ token: 1 })

    const e = await refusal(store.passGate('gate/nothing-here', 'alice', 1))
    expect(e).toBeInstanceOf(LeaseLostError)
    expect((e as LeaseLostError).reason).toBe('the lease document does not exist')
  })

  test('bad input is a ValidationError, not a fencing refusal', async () => {
    await expect(store.passGate('gate/x', 'alice', 0)).rejects.toBeInstanceOf(ValidationError)
    await expect(store.passGate('gate/x', '', 1)).rejects.toBeInstanceOf(ValidationError)
    await expect(store.passGate('', 'alice', 1)).rejects.toBeInstanceOf(ValidationError)
  })
})

describe('fencedTransaction', () => {
  const site = () => store.db.collection('site').doc('current')

  test("commits the caller's writes with the gate record only when the gate passes", async () => {
    const res = 'gate/fenced'
    const a = await token(res, 'alice')
    const ok = await store.fencedTransaction(res, 'alice', a, async (tx) => {
      tx.set(site(), { version: 'alice-1' })
      return 'written'
    })
    expect(ok.result).toBe('written')
    expect(ok.pass).toMatchObject({ token: 1, previousToken: 0 })
    expect((await site().get()).data()).toEqual({ version: 'alice-1' })

    // alice is taken over; her late write must not land, and her callback must not even run.
    await expireBehindBack(store, res)
    const b = await token(res, 'bob')
    let calls = 0
    const err = await refusal(
      store.fencedTransaction(res, 'alice', a, async (tx) => {
        calls++
        tx.set(site(), { version: 'alice-late' })
      })
    )
    expect(err).toBeInstanceOf(LeaseLostError)
    expect(calls).toBe(0)
    expect((await site().get()).data()).toEqual({ version: 'alice-1' })

    await store.fencedTransaction(res, 'bob', b, async (tx) => {
      tx.set(site(), { version: 'bob-2' })
    })
    expect((await site().get()).data()).toEqual({ version: 'bob-2' })
    expect(await store.gateStatus(res)).toMatchObject({ fencing: 2, owner: 'bob' })

    // Now alice is outrun at the gate: StaleFencingError, and still nothing of hers lands.
    const stale = await refusal(store.fencedTransaction(res, 'alice', a, async (tx) => tx.set(site(), { version: 'alice-late' })))
    expect(stale).toBeInstanceOf(StaleFencingError)
    expect((await site().get()).data()).toEqual({ version: 'bob-2' })
  })

  test('a callback that throws commits neither its writes nor the gate record', async () => {
    const res = 'gate/fenced-throws'
    const a = await token(res, 'alice')
    const doc = store.db.collection('site').doc('throws')
    await expect(
      store.fencedTransaction(res, 'alice', a, async (tx) => {
        tx.set(doc, { half: true })
        throw new Error('boom')
      })
    ).rejects.toThrow(/boom/)
    expect((await doc.get()).exists).toBe(false)
    expect(await store.gateStatus(res)).toBeUndefined()
  })
})

describe('checkGate (what publish runs)', () => {
  const logs: string[] = []
  const dirs: string[] = []
  afterEach(() => {
    setLogSink((line) => process.stderr.write(line + '\n'))
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
  })

  test('passes the current holder and refuses a stale one without throwing; both are logged and counted', async () => {
    setLogSink((line) => logs.push(line))
    const res = 'gate/check'
    const stateDir = mkdtempSync(join(tmpdir(), 'lf-gate-'))
    dirs.push(stateDir)
    const a = await token(res, 'alice')
    expect(await checkGate(store, { resource: res, owner: 'alice', token: a })).toMatchObject({ passed: true })
    await expireBehindBack(store, res)
    const b = await token(res, 'bob')
    expect(await checkGate(store, { resource: res, owner: 'bob', token: b, stateDir })).toMatchObject({ passed: true })
    const refused = await checkGate(store, { resource: res, owner: 'alice', token: a, stateDir })
    expect(refused.passed).toBe(false)
    if (!refused.passed) {
      expect(refused.error).toBeInstanceOf(StaleFencingError)
      expect(refused.fromMarker).toBe(false)
    }
    expect(EXIT_FENCED).toBe(75)
    expect(logs.filter((l) => l.startsWith('leasefence event=gate_passed'))).toHaveLength(2)
    expect(logs.filter((l) => l.startsWith('leasefence event=gate_refused'))).toHaveLength(1)
    const events = readFileSync(join(stateDir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(events.map((e) => [e.type, e.token])).toEqual([
      ['gate_passed', 2],
      ['gate_refused', 1]
    ])
  })

  test("the heartbeat's lost marker refuses at once, without asking Firestore", async () => {
    setLogSink((line) => logs.push(line))
    const stateDir = mkdtempSync(join(tmpdir(), 'lf-gate-'))
    dirs.push(stateDir)
    writeLostMarker(stateDir, { reason: 'taken over by bob with token 2', at: new Date().toISOString(), token: 1 })
    let asked = 0
    const fake = {
      passGate: async () => {
        asked++
        throw new Error('must not be called')
      }
    }
    const r = await checkGate(fake, { resource: 'gate/marker', owner: 'alice', token: 1, stateDir })
    expect(asked).toBe(0)
    expect(r.passed).toBe(false)
    if (!r.passed) {
      expect(r.fromMarker).toBe(true)
      expect(r.error).toBeInstanceOf(LeaseLostError)
      expect(r.error.message).toContain('taken over by bob with token 2')
    }
  })
})
