import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { readAudit } from '../../src/core/operations'
import { slotResource } from '../../src/core/resource-id'
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github'
import { makeStore, reset, uniqueProject } from '../support/firestore'
import { readLeaseDoc, topLevelCollections } from '../support/lease-helpers'
import { SimulatedJob } from '../support/runner'

/** The operator features of the action, each step a process of the committed bundle. */
const project = uniqueProject('action-ops')
const store = makeStore(project)
const jobs: SimulatedJob[] = []
let gh: FakeGitHub

function job(n: number, opts: { env?: Record<string, string>; githubToken?: string; apiUrl?: string; runId?: string } = {}): SimulatedJob {
  const j = new SimulatedJob({
    job: `job-${n}`,
    runId: opts.runId,
    githubToken: opts.githubToken,
    apiUrl: opts.apiUrl,
    env: { GOOGLE_CLOUD_PROJECT: project, ...(opts.env ?? {}) }
  })
  jobs.push(j)
  return j
}

beforeAll(async () => {
  gh = await startFakeGitHub()
})
beforeEach(() => reset(project))
afterEach(async () => {
  for (const j of jobs.splice(0)) expect((await j.end()).killed).toEqual([])
})
afterAll(async () => {
  await gh.close()
  await store.close()
})

describe('N-slot leases through the action', () => {
  test('3 slots for 5 jobs: distinct slots with deterministic port and schema, two skip; env-file for later steps', async () => {
    const results = []
    for (let i = 0; i < 5; i++) {
      const j = job(i)
      const r = await j.main({ resource: 'env/preview', slots: '3', ttl: '10s', 'port-base': '4000', 'ports-per-slot': '5', 'env-file': join(j.workspace, 'slot.env') })
      expect(r.exitCode, r.log).toBe(0)
      results.push({ j, r })
    }
    const won = results.filter((x) => x.r.outputs.acquired === 'true')
    expect(won.map((x) => x.r.outputs.slot)).toEqual(['0', '1', '2'])
    expect(won.map((x) => x.r.outputs.port)).toEqual(['4000', '4005', '4010'])
    expect(won.map((x) => x.r.outputs.schema)).toEqual(['agent_0', 'agent_1', 'agent_2'])
    expect(readFileSync(join(won[1].j.workspace, 'slot.env'), 'utf8')).toBe('LEASE_SLOT=1\nPORT=4005\nDB_SCHEMA=agent_1\nLEASEFENCE_FENCING_TOKEN=1\n')
    // Each slot is its own lease: later steps fence on the slot's resource.
    expect(won[2].r.env.LEASEFENCE_RESOURCE).toBe(slotResource('env/preview', 2))
    expect(results.filter((x) => x.r.outputs.acquired === 'false')).toHaveLength(2)
    for (let i = 0; i < 3; i++) expect((await readLeaseDoc(store, slotResource('env/preview', i))).data?.fencing).toBe(1)

    // Slot 1's job ends; a new job gets exactly that slot and its values back.
    const post = await won[1].j.post()
    expect(post.summary).toMatch(/\| Slot \| 1 \|/)
    const again = job(9)
    const r = await again.main({ resource: 'env/preview', slots: '3', ttl: '10s', 'port-base': '4000', 'ports-per-slot': '5' })
    expect(r.outputs).toMatchObject({ acquired: 'true', slot: '1', port: '4005', schema: 'agent_1', 'fencing-token': '2', 'previous-expired': 'false' })
    for (const x of [...won, { j: again }]) await x.j.post()
  })
})

describe('stuck locks and liveness', () => {
  test('skips are counted on the lease; at stuck-threshold a warning names the holder', async () => {
    const holder = job(1)
    const h = await holder.main({ resource: 'ops/stuck', ttl: '20s' })
    expect(h.outputs.acquired).toBe('true')
    const seen = []
    for (let i = 2; i <= 4; i++) {
      const r = await job(i).main({ resource: 'ops/stuck', ttl: '20s', 'stuck-threshold': '3' })
      expect(r.outputs.acquired).toBe('false')
      seen.push(r)
    }
    expect(seen[0].outputs.stuck).toBeUndefined()
    expect(seen[1].outputs.stuck).toBeUndefined()
    expect(seen[2].outputs.stuck).toBe('true')
    const warn = seen[2].annotations.find((a) => a.level === 'warning')
    expect(warn?.properties.title).toBe('leasefence: lock stuck')
    expect(warn?.message).toContain(h.outputs.owner)
    expect(warn?.message).toContain('3 runs have skipped')
    expect(seen[2].log).toContain('leasefence event=lock_stuck')
    expect((await readLeaseDoc(store, 'ops/stuck')).data?.skipCount).toBe(3)
    await holder.post()
  })

  test('a holder whose run completed is taken over at once; its later publish is refused', async () => {
    const old = job(1, { runId: '5551' })
    const o = await old.main({ resource: 'ops/live', ttl: '60s' })
    expect(o.outputs.acquired).toBe('true')
    gh.runs.set('5551/1', { status: 'completed', conclusion: 'cancelled' })
    const next = job(2, { githubToken: 'ghs_fake_token_for_tests', apiUrl: gh.url })
    const n = await next.main({ resource: 'ops/live', ttl: '60s' })
    expect(n.exitCode, n.log).toBe(0)
    expect(n.outputs).toMatchObject({ acquired: 'true', 'fencing-token': '2', 'took-over-from': o.outputs.owner })
    const note = n.annotations.find((a) => a.properties.title === 'leasefence: stale holder taken over')
    expect(note?.message).toMatch(/completed \(cancelled\)/)
    expect(n.masks).toContain('ghs_fake_token_for_tests')
    // The old job (its post never ran: cancelled) is fenced off.
    const pub = await old.shell('leasefence publish -- echo SHOULD-NOT-RUN')
    expect(pub.exitCode).toBe(75)
    expect(pub.log).not.toContain('SHOULD-NOT-RUN\n')
    const post = await next.post()
    expect(post.summary).toMatch(/Took over/)
    expect((await readAudit(store, 'ops/live')).map((a) => a.action)).toContain('takeover_stale_run')
    await old.post()
  })

  test('no takeover when the GitHub API fails', async () => {
    const old = job(1, { runId: '6661' })
    await old.main({ resource: 'ops/live-err', ttl: '60s' })
    gh.runs.set('6661/1', 500)
    const r = await job(2, { githubToken: 'ghs_x', apiUrl: gh.url }).main({ resource: 'ops/live-err', ttl: '60s' })
    expect(r.outputs.acquired).toBe('false')
    expect((await readLeaseDoc(store, 'ops/live-err')).data?.fencing).toBe(1)
    await old.post()
  })
})

describe('operator controls through the action', () => {
  test('force-release expires the holder, keeps the counter, audits reason and actor; the old holder is fenced', async () => {
    const holder = job(1)
    const h = await holder.main({ resource: 'ops/force', ttl: '60s' })
    const op = job(2)
    const bad = await op.main({ resource: 'ops/force', 'force-release': 'true' })
    expect(bad.exitCode).toBe(1)
    expect(bad.log).toMatch(/reason: force-release needs a reason/)
    const f = await op.main({ resource: 'ops/force', 'force-release': 'true', reason: 'stuck runner, INC-42' })
    expect(f.exitCode, f.log).toBe(0)
    expect(f.outputs).toMatchObject({ acquired: 'false', 'took-over-from': h.outputs.owner })
    expect(f.log).toContain('leasefence event=force_release_lock')
    const audit = (await readAudit(store, 'ops/force')).find((a) => a.action === 'force_release')
    expect(audit).toMatchObject({ previousOwner: h.outputs.owner, fencing: 1, reason: 'stuck runner, INC-42' })
    expect(String(audit?.actor)).toContain('octocat')
    const pub = await holder.shell('leasefence publish -- true')
    expect(pub.exitCode).toBe(75)
    const next = await job(3).main({ resource: 'ops/force', ttl: '10s' })
    expect(next.outputs['fencing-token']).toBe('2')
    for (const j of jobs) await j.post()
  })

  test('dry-run writes nothing to Firestore and goes on as if acquired; publish only says what the gate would do', async () => {
    const j = job(1)
    const r = await j.main({ resource: 'ops/dry', 'dry-run': 'true' })
    expect(r.exitCode, r.log).toBe(0)
    expect(r.outputs).toMatchObject({ acquired: 'true', 'fencing-token': '1', mode: 'dry-run' })
    expect(r.annotations.find((a) => a.properties.title === 'leasefence: dry run')?.message).toMatch(/would acquire "ops\/dry" with token 1/)
    const pub = await j.uses('publish', { run: 'echo published-in-dry-run' })
    expect(pub.exitCode, pub.log).toBe(0)
    expect(pub.log).toContain('published-in-dry-run')
    const cli = await j.shell('leasefence publish -- echo cli-dry')
    expect(cli.exitCode).toBe(0)
    const post = await j.post()
    expect(post.exitCode).toBe(0)
    expect(await topLevelCollections(store.db)).toEqual([])
  })

  test('LEASEFENCE_DISABLED: no lease at all, said loudly; publish runs without the gate', async () => {
    const j = job(1, { env: { LEASEFENCE_DISABLED: '1' } })
    const r = await j.main({ resource: 'ops/off' })
    expect(r.exitCode).toBe(0)
    expect(r.outputs).toMatchObject({ acquired: 'true', mode: 'disabled', 'fencing-token': '0' })
    expect(r.annotations.find((a) => a.level === 'warning')?.message).toMatch(/NO LEASE IS TAKEN/)
    const pub = await j.uses('publish', { run: 'echo unfenced' })
    expect(pub.exitCode).toBe(0)
    expect(pub.log).toContain('unfenced')
    await j.post()
    expect(await topLevelCollections(store.db)).toEqual([])
  })

  test('supersede: a newer waiting run replaces the older waiting one', async () => {
    const holder = job(1)
    await holder.main({ resource: 'ops/supersede', ttl: '30s' })
    const older = job(2)
    const olderMain = older.main({ resource: 'ops/supersede', ttl: '30s', 'on-busy': 'supersede', 'wait-timeout': '1m' })
    await new Promise((r) => setTimeout(r, 2500))
    const newer = job(3)
    const newerMain = newer.main({ resource: 'ops/supersede', ttl: '30s', 'on-busy': 'supersede', 'wait-timeout': '1m' })
    const o = await olderMain
    expect(o.exitCode, o.log).toBe(0)
    expect(o.outputs).toMatchObject({ acquired: 'false', superseded: 'true' })
    expect(o.annotations.find((a) => a.properties.title === 'leasefence: superseded')).toBeTruthy()
    await holder.post()
    const n = await newerMain
    expect(n.outputs).toMatchObject({ acquired: 'true', 'fencing-token': '2' })
    await newer.post()
    await older.post()
  })
})
