import { afterAll, beforeEach, describe, expect, test } from 'vitest'
import { readAudit } from '../../src/core/operations'
import { makeStore, reset, uniqueProject } from '../support/firestore'
import { expireBehindBack, readLeaseDoc, topLevelCollections } from '../support/lease-helpers'
import { runCli } from '../support/procs'

/** The operator commands of the CLI, through the committed bundle (dist/cli.js). */
const project = uniqueProject('cli-ops')
const store = makeStore(project)
const env = { LEASEFENCE_PROJECT: project }
afterAll(() => store.close())
beforeEach(() => reset(project))

describe('leasefence status / release --force / reap', () => {
  test('status shows holder, token, expiry, queue, skips and the last gate pass; --json for scripts', async () => {
    await store.acquire('ops/a', 'alpha', { ttlMs: 60_000 })
    await store.passGate('ops/a', 'alpha', 1)
    await store.acquire('ops/b', 'beta', { ttlMs: 60_000 })
    await store.release('ops/b', 'beta', 1)
    const table = await runCli(['status'], { env })
    expect(table.code, table.stderr).toBe(0)
    const lines = table.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^RESOURCE\s+HOLDER\s+TOKEN\s+EXPIRES IN\s+QUEUE\s+SKIPS\s+LAST GATE PASS$/)
    expect(lines[1]).toMatch(/^ops\/a\s+alpha\s+1\s+\d+(\.\d)?s\s+0\s+0\s+token 1, /)
    expect(lines[2]).toMatch(/^ops\/b\s+\(free; last beta\)\s+1\s+-/)
    const json = await runCli(['status', 'ops/a', '--json'], { env })
    const rows = JSON.parse(json.stdout)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ resource: 'ops/a', owner: 'alpha', token: 1, live: true, gateToken: 1, queueLength: 0, skipCount: 0 })
  })

  test('release --force needs a reason, expires the holder, keeps the counter and audits it', async () => {
    await store.acquire('ops/f', 'stuck', { ttlMs: 60_000 })
    const no = await runCli(['release', '--force', 'ops/f'], { env })
    expect(no.code).not.toBe(0)
    expect(no.stderr).toMatch(/needs --reason/)
    expect((await readLeaseDoc(store, 'ops/f')).data?.releasedAt).toBeNull()
    const r = await runCli(['release', '--force', '--reason', 'INC-7 runner gone', '--actor', 'oncall', 'ops/f'], { env })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/released: expired the live lease of stuck/)
    expect(r.stderr).toContain('leasefence event=force_release_lock')
    expect((await store.status('ops/f')).live).toBe(false)
    expect((await store.acquire('ops/f', 'next', { ttlMs: 5000 })).acquired && (await store.status('ops/f')).token).toBe(2)
    expect((await readAudit(store, 'ops/f')).find((a) => a.action === 'force_release')).toMatchObject({ reason: 'INC-7 runner gone', actor: 'oncall' })
  })

  test('reap lists and marks leases that expired without a release', async () => {
    await store.acquire('ops/crashed', 'dead', { ttlMs: 60_000 })
    await expireBehindBack(store, 'ops/crashed')
    await store.acquire('ops/alive', 'alive', { ttlMs: 60_000 })
    const dry = await runCli(['reap', '--dry-run'], { env })
    expect(dry.stdout).toContain('ops/crashed')
    expect(dry.stdout).not.toContain('ops/alive')
    const r = await runCli(['reap', '--actor', 'ops'], { env })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/reaped 1/)
    expect((await readLeaseDoc(store, 'ops/crashed')).data?.releasedBy).toBe('reap:ops')
    expect((await readLeaseDoc(store, 'ops/alive')).data?.releasedAt).toBeNull()
  })
})

describe('switches', () => {
  test('LEASEFENCE_DRY_RUN: run and publish write nothing and still run the command', async () => {
    await store.acquire('ops/held', 'someone', { ttlMs: 60_000 })
    const r = await runCli(['run', '--resource', 'ops/dry', '--', 'sh', '-c', 'echo token=$LEASEFENCE_FENCING_TOKEN; node "$CLI" publish -- echo pushed'], {
      env: { ...env, LEASEFENCE_DRY_RUN: '1', CLI: `${process.cwd()}/dist/cli.js` }
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('token=1')
    expect(r.stdout).toContain('pushed')
    expect(r.stderr).toMatch(/dry run: would acquire "ops\/dry" with token 1; nothing written/)
    expect(r.stderr).toMatch(/dry run: the gate would pass token 1/)
    expect((await readLeaseDoc(store, 'ops/dry')).exists).toBe(false)
    // Busy in reality: a dry run says so, and still goes on.
    const busy = await runCli(['run', '--resource', 'ops/held', '--', 'true'], { env: { ...env, LEASEFENCE_DRY_RUN: '1' } })
    expect(busy.code).toBe(0)
    expect(busy.stderr).toMatch(/is held by someone \(token 1\); a real run would be busy/)
    expect((await readLeaseDoc(store, 'ops/held')).data?.owner).toBe('someone')
  })

  test('LEASEFENCE_DISABLED: no lease at all, said loudly', async () => {
    await reset(project)
    const r = await runCli(['run', '--resource', 'ops/off', '--', 'echo', 'ran'], { env: { ...env, LEASEFENCE_DISABLED: '1' } })
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('ran')
    expect(r.stderr).toMatch(/NO LEASE IS TAKEN/)
    const p = await runCli(['publish', '--', 'echo', 'pushed'], { env: { ...env, LEASEFENCE_DISABLED: '1' } })
    expect(p.code).toBe(0)
    expect(p.stdout).toContain('pushed')
    expect(await topLevelCollections(store.db)).toEqual([])
  })

  test('run --on-busy supersede: the older waiter gives up without running its command', async () => {
    await store.acquire('ops/sup', 'holder', { ttlMs: 60_000 })
    const older = runCli(['run', '--resource', 'ops/sup', '--on-busy', 'supersede', '--owner', 'older', '--', 'echo', 'older-ran'], { env })
    await new Promise((r) => setTimeout(r, 1500))
    const newer = runCli(['run', '--resource', 'ops/sup', '--on-busy', 'supersede', '--owner', 'newer', '--', 'echo', 'newer-ran'], { env })
    const o = await older
    expect(o.code).toBe(0)
    expect(o.stdout).not.toContain('older-ran')
    expect(o.stderr).toMatch(/superseded: a newer waiter \(newer\)/)
    await store.release('ops/sup', 'holder', 1)
    const n = await newer
    expect(n.code, n.stderr).toBe(0)
    expect(n.stdout).toContain('newer-ran')
  })
})
