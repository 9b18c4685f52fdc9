import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { LeaseBusyError, ValidationError } from '../../src/core/errors'
import { slotResource } from '../../src/core/resource-id'
import { parseEnvFile } from '../../src/env/env-file'
import {
  acquireEnvironment,
  discoverSlots,
  environmentPorts,
  reapEnvironments,
  releaseEnvironment,
  renewEnvironment,
  TEARDOWN_TTL_MS,
  TeardownError,
  type AcquireEnvironmentOptions,
  type Environment
} from '../../src/env/environment'
import { findListeners } from '../../src/env/process-ports'
import { NotReadyError, waitReady } from '../../src/env/ready'
import { SchemaCloneError } from '../../src/env/schema-clone'
import { makeStore, uniqueProject } from '../support/firestore'
import { auditActions, expireBehindBack, readLeaseDoc } from '../support/lease-helpers'
import { startPostgres, TEMPLATE_MIGRATION, type TestPostgres } from '../support/postgres'
import { cloneRepo, gitSync, killStrays, makeOrigin, quietPortBlock, startStrayServer, worktreePaths } from './fixtures'

/**
 * Environment leases end to end through the library: real Firestore emulator, real PostgreSQL cluster,
 * real git worktrees, real processes listening on real ports.
 */
const store = makeStore(uniqueProject('env'))
const tmp = mkdtempSync(join(tmpdir(), 'leasefence-env-'))
let pgc: TestPostgres
let origin: string
let originCommit: string
/** 100 quiet ports per pool (25 pools), below the ephemeral range. */
const BLOCK = quietPortBlock(2500)
let pools = 0

beforeAll(async () => {
  pgc = await startPostgres()
  await pgc.query(TEMPLATE_MIGRATION)
  ;({ origin, commit: originCommit } = makeOrigin(tmp))
})
afterAll(async () => {
  killStrays()
  await store.close()
  await pgc?.stop()
  rmSync(tmp, { recursive: true, force: true })
})

/**
 * A pool of its own per test: resource, ports, schema prefix and repository, so tests do not meet.
 * Slots: 3; bands of 10 ports: dev, api, db-proxy 40 apart.
 */
function pool(extra: Partial<AcquireEnvironmentOptions> = {}) {
  const n = ++pools
  if (n > 25) throw new Error('more pools than quiet ports: raise the quietPortBlock size')
  const base = BLOCK + (n - 1) * 100
  const dir = join(tmp, `pool-${n}`)
  const repo = cloneRepo(origin, dir)
  const opts = {
    resource: `box-${n}`,
    slots: 3,
    portBases: `dev=${base},api=${base + 40},db-proxy=${base + 80}`,
    portsPerSlot: 10,
    schemaPrefix: `p${n}_agent_`,
    database: { url: pgc.url, template: 'tpl_migrated' },
    worktree: { repo, baseRef: 'origin/main' },
    killGraceMs: 500,
    ...extra
  }
  const acquire = async (agentId: string, more: Partial<AcquireEnvironmentOptions> = {}): Promise<Environment> => {
    const r = await acquireEnvironment(store, { ...opts, agentId, ...more })
    if (!r.acquired) throw new Error(r.busy)
    return r.environment
  }
  return { n, base, dir, repo, opts, acquire, wt: (slot: number) => join(dir, `wt-agent-${slot}`), schema: (slot: number) => `p${n}_agent_${slot}` }
}

async function schemaExists(name: string): Promise<boolean> {
  return (await pgc.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [name])).length > 0
}

async function insertUser(databaseUrl: string, email: string): Promise<number> {
  const c = new pg.Client({ connectionString: databaseUrl })
  await c.connect()
  try {
    return (await c.query('INSERT INTO users (email) VALUES ($1) RETURNING id', [email])).rows[0].id
  } finally {
    await c.end()
  }
}

describe('acquire', () => {
  test('two agents get disjoint ports, schemas and worktrees; the env file says so', async () => {
    const p = pool()
    const envFile = join(p.dir, 'a.env')
    const a = await p.acquire('agent-a', { envFile })
    const b = await p.acquire('agent-b')
    expect([a.slot, b.slot]).toEqual([0, 1])
    expect(a.ports).toEqual({ dev: p.base, api: p.base + 40, 'db-proxy': p.base + 80 })
    expect(b.ports).toEqual({ dev: p.base + 10, api: p.base + 50, 'db-proxy': p.base + 90 })
    expect(a.schema).toBe(p.schema(0))
    expect(b.schema).toBe(p.schema(1))
    expect(a.worktree).toMatchObject({ path: p.wt(0), branch: 'agent/0', action: 'created', head: originCommit })
    expect(b.worktree).toMatchObject({ path: p.wt(1), branch: 'agent/1', action: 'created', head: originCommit })
    expect(worktreePaths(p.repo)).toEqual([p.repo, p.wt(0), p.wt(1)])
    expect(gitSync(p.wt(1), ['rev-parse', '--abbrev-ref', 'HEAD'])).toBe('agent/1')
    expect(readFileSync(join(p.wt(0), 'README.md'), 'utf8')).toBe('# app\n')

    // The fencing token is attached to the slot.
    expect(a.token).toBe((await readLeaseDoc(store, slotResource(p.opts.resource, 0))).data!.fencing)
    const file = parseEnvFile(readFileSync(envFile, 'utf8'))
    expect(file).toEqual({
      PORT: String(p.base),
      API_PORT: String(p.base + 40),
      DB_PROXY_PORT: String(p.base + 80),
      DATABASE_URL: `${pgc.url}?options=-c%20search_path%3D${p.schema(0)}`,
      DB_SCHEMA: p.schema(0),
      WORKTREE: p.wt(0),
      AGENT_ID: 'agent-a',
      LEASE_INDEX: '0',
      LEASEFENCE_FENCING_TOKEN: String(a.token),
      LEASEFENCE_RESOURCE: `${p.opts.resource}#slot-0`,
      LEASEFENCE_OWNER: 'agent-a',
      LEASEFENCE_ENV_RESOURCE: p.opts.resource
    })
    expect(a.env).toEqual(file)

    // A row written through slot 0's DATABASE_URL lands in slot 0's schema only.
    const id = await insertUser(a.databaseUrl!, 'a@example.com')
    expect(id).toBe(1)
    expect(await pgc.query(`SELECT email FROM ${p.schema(0)}.users`)).toEqual([{ email: 'a@example.com' }])
    expect(await pgc.query(`SELECT email FROM ${p.schema(1)}.users`)).toEqual([])
    expect(await pgc.query('SELECT email FROM tpl_migrated.users')).toEqual([])

    // The lease records the layout (no password), so release and reap know what to tear down.
    const holder = (await readLeaseDoc(store, slotResource(p.opts.resource, 0))).data!.holder
    expect(holder).toMatchObject({
      kind: 'leasefence-env',
      agent: 'agent-a',
      host: hostname(),
      portBase: p.opts.portBases,
      portsPerSlot: '10',
      schemaPrefix: `p${p.n}_agent_`,
      template: 'tpl_migrated',
      worktreeRepo: p.repo
    })
  })

  test('the same agent acquiring again gets its slot back and keeps its data and worktree', async () => {
    const p = pool()
    const first = await p.acquire('agent-a')
    await insertUser(first.databaseUrl!, 'keep@example.com')
    writeFileSync(join(p.wt(0), 'work-in-progress.txt'), 'wip')
    const again = await p.acquire('agent-a')
    expect(again).toMatchObject({ slot: 0, reused: true, ports: first.ports, schema: first.schema })
    expect(again.token).toBeGreaterThan(first.token)
    expect(again.worktree!.action).toBe('kept')
    expect(existsSync(join(p.wt(0), 'work-in-progress.txt'))).toBe(true)
    expect(await pgc.query(`SELECT email FROM ${p.schema(0)}.users`)).toEqual([{ email: 'keep@example.com' }])
  })

  test('three agents at once get three different slots, each with its own verified schema and worktree', async () => {
    const p = pool()
    const envs = await Promise.all(['x', 'y', 'z'].map((a) => p.acquire(`agent-${a}`)))
    expect(envs.map((e) => e.slot).sort()).toEqual([0, 1, 2])
    for (const e of envs) {
      expect(e.schema).toBe(p.schema(e.slot))
      expect(e.clone!.cloneCounts).toEqual(e.clone!.templateCounts)
      expect(e.worktree!.path).toBe(p.wt(e.slot))
    }
    expect(new Set(envs.flatMap((e) => Object.values(e.ports))).size).toBe(9)
  })

  test('every slot busy: fail names the holders; nothing is provisioned', async () => {
    const p = pool({ slots: 1 })
    await p.acquire('agent-a')
    await expect(p.acquire('agent-b')).rejects.toThrow(LeaseBusyError)
    await expect(p.acquire('agent-b')).rejects.toThrow(/held by agent-a/)
  })

  test('unsafe names are refused before any SQL runs and before any lease is taken', async () => {
    const p = pool()
    const fresh = 'unsafe_check'
    await pgc.query(`CREATE DATABASE ${fresh}`)
    const url = pgc.urlFor(fresh)
    await expect(p.acquire('agent-a', { schemaPrefix: 'Agent-' })).rejects.toThrow(ValidationError)
    await expect(p.acquire('agent-a', { database: { url, template: 'tpl_migrated; DROP SCHEMA public' } })).rejects.toThrow(/not a safe schema name/)
    await expect(p.acquire('agent-a', { database: { url, template: 'tpl_migrated' }, schemaPrefix: 'agent"; --' })).rejects.toThrow(ValidationError)
    await expect(p.acquire('agent-a', { database: { url, template: 'p' + p.n + '_agent_1' }, schemaPrefix: `p${p.n}_agent_` })).rejects.toThrow(
      /is the schema of slot 1/
    )
    // No lease document, no function installed, no schema created.
    expect(await discoverSlots(store, p.opts.resource)).toEqual([])
    expect(await pgc.query(`SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg_%' AND nspname <> 'information_schema' ORDER BY 1`, [], url)).toEqual([
      { nspname: 'public' }
    ])
  })

  test('a provisioning failure undoes what it made and releases the slot', async () => {
    const p = pool()
    const err = await p.acquire('agent-a', { database: { url: pgc.url, template: 'tpl_absent' } }).catch((e: Error) => e)
    expect(err).toBeInstanceOf(SchemaCloneError)
    expect((err as Error).message).toMatch(/template schema "tpl_absent" does not exist.*released slot 0/)
    expect((await store.status(slotResource(p.opts.resource, 0))).live).toBe(false)
    expect(await schemaExists(p.schema(0))).toBe(false)
    expect(existsSync(p.wt(0))).toBe(false)
  })
})

describe('release and reap', () => {
  test('the holder releases: processes on its ports stopped, schema dropped, worktree removed, lease released', async () => {
    const p = pool()
    const a = await p.acquire('agent-a')
    const dev = await startStrayServer(a.ports.dev)
    const other = await startStrayServer(p.base + 10) // slot 1's dev port: not ours
    const steps: string[] = []
    const r = await releaseEnvironment(store, { ...p.opts, slot: 0, agentId: 'agent-a', onStep: (s) => steps.push(`${s.step}:${s.action}`) })
    expect(r.lease).toBe('released')
    expect(await dev.exited).toEqual({ code: null, signal: 'SIGTERM' })
    expect(other.child.exitCode).toBeNull()
    expect(findListeners([p.base + 10]).listeners.map((l) => l.pid)).toEqual([other.pid])
    expect(await schemaExists(p.schema(0))).toBe(false)
    expect(existsSync(p.wt(0))).toBe(false)
    expect(worktreePaths(p.repo)).toEqual([p.repo])
    expect(gitSync(p.repo, ['branch', '--list', 'agent/0'])).toContain('agent/0') // commits on it survive
    expect(steps).toEqual(['lease:holding', 'processes:stopped', 'schema:dropped', 'worktree:removed', 'lease:released'])
    expect((await store.status(slotResource(p.opts.resource, 0))).live).toBe(false)
    other.child.kill('SIGKILL')

    // Again: every step tolerates "already gone".
    const again = await releaseEnvironment(store, { ...p.opts, slot: 0, agentId: 'agent-a' })
    expect(again.steps.map((s) => `${s.step}:${s.action}`)).toEqual(['lease:holding', 'processes:absent', 'schema:absent', 'worktree:absent', 'lease:released'])
  })

  test('release needs nothing but the database URL: the layout comes from the lease record', async () => {
    const p = pool()
    await p.acquire('agent-a')
    const r = await releaseEnvironment(store, { resource: p.opts.resource, slot: 0, agentId: 'agent-a', database: { url: pgc.url } })
    expect(r.errors).toEqual([])
    expect(await schemaExists(p.schema(0))).toBe(false)
    expect(existsSync(p.wt(0))).toBe(false)
  })

  test("another agent's live slot is refused, and so is a slot acquired again since the given token", async () => {
    const p = pool()
    const a = await p.acquire('agent-a')
    await expect(releaseEnvironment(store, { ...p.opts, slot: 0, agentId: 'mallory' })).rejects.toThrow(/held by agent-a/)
    const a2 = await p.acquire('agent-a')
    await expect(releaseEnvironment(store, { ...p.opts, slot: 0, agentId: 'agent-a', token: a.token })).rejects.toThrow(
      new RegExp(`now carries token ${a2.token}`)
    )
    expect(await schemaExists(p.schema(0))).toBe(true)
    expect(existsSync(p.wt(0))).toBe(true)
  })

  test('reaping a live slot is refused and touches nothing', async () => {
    const p = pool()
    const a = await p.acquire('agent-a')
    const dev = await startStrayServer(a.ports.dev)
    await expect(reapEnvironments(store, { ...p.opts, slot: 0, actor: 'ops' })).rejects.toThrow(LeaseBusyError)
    await expect(reapEnvironments(store, { ...p.opts, slot: 0, actor: 'ops' })).rejects.toThrow(/held by agent-a .*never reaped/)
    const all = await reapEnvironments(store, { ...p.opts, actor: 'ops' })
    expect(all.map((r) => [r.slot, r.outcome])).toEqual([
      [0, 'live'],
      [1, 'unused'],
      [2, 'unused']
    ])
    expect(dev.child.exitCode).toBeNull()
    expect(await schemaExists(p.schema(0))).toBe(true)
    expect(existsSync(p.wt(0))).toBe(true)
    expect((await store.status(slotResource(p.opts.resource, 0))).owner).toBe('agent-a')
    dev.child.kill('SIGKILL')
  })

  test('a crashed holder (lease expired behind its back): reap removes its schema, worktree and stray processes', async () => {
    const p = pool()
    const a = await p.acquire('agent-a')
    const b = await p.acquire('agent-b')
    // agent-b crashes, leaving a dev server and a SIGTERM-deaf helper on a port of its api band.
    const stray = await startStrayServer(b.ports.dev)
    const deaf = await startStrayServer(b.ports.api + 3, { ignoreTerm: true })
    const neighbour = await startStrayServer(a.ports.dev) // agent-a's, live
    await expireBehindBack(store, slotResource(p.opts.resource, 1))

    const rows = await reapEnvironments(store, { ...p.opts, expiredOnly: true, actor: 'ops' })
    expect(rows.map((r) => [r.slot, r.outcome])).toEqual([
      [0, 'live'],
      [1, 'reaped'],
      [2, 'unused']
    ])
    const reaped = rows[1]
    expect(reaped.previousOwner).toBe('agent-b')
    const stopped = reaped.report!.steps.filter((s) => s.step === 'processes').map((s) => s.detail)
    expect(stopped).toEqual([
      expect.stringMatching(new RegExp(`pid ${stray.pid} .* on ${b.ports.dev}: terminated`)),
      expect.stringMatching(new RegExp(`pid ${deaf.pid} .* on ${b.ports.api + 3}: killed`))
    ])
    expect(await stray.exited).toEqual({ code: null, signal: 'SIGTERM' })
    expect(await deaf.exited).toEqual({ code: null, signal: 'SIGKILL' })
    expect(neighbour.child.exitCode).toBeNull()
    expect(await schemaExists(p.schema(1))).toBe(false)
    expect(await schemaExists(p.schema(0))).toBe(true)
    expect(existsSync(p.wt(1))).toBe(false)
    expect(worktreePaths(p.repo)).toEqual([p.repo, p.wt(0)])
    const s1 = await store.status(slotResource(p.opts.resource, 1))
    expect(s1.live).toBe(false)
    expect((await auditActions(store, slotResource(p.opts.resource, 1))).map((x) => x.action)).toEqual([
      'acquire',
      'takeover_expired',
      'env_reap',
      'release'
    ])
    neighbour.child.kill('SIGKILL')

    // Reaping again finds nothing left to do on slot 1 (expired-only skips the clean release).
    const again = await reapEnvironments(store, { ...p.opts, expiredOnly: true, actor: 'ops' })
    expect(again.map((r) => [r.slot, r.outcome])).toEqual([
      [0, 'live'],
      [1, 'released'],
      [2, 'unused']
    ])
  })

  test('an environment made on another host: reap drops its schema but leaves processes and worktree here alone', async () => {
    const p = pool()
    const a = await p.acquire('agent-a')
    const local = await startStrayServer(a.ports.dev) // someone else's server on this machine
    const res = slotResource(p.opts.resource, 0)
    await store.leaseRef(res).update({ 'holder.host': 'some-other-runner' })
    await expireBehindBack(store, res)
    const [r] = await reapEnvironments(store, { ...p.opts, slot: 0, actor: 'ops' })
    expect(r.outcome).toBe('reaped')
    expect(r.report!.steps.map((s) => `${s.step}:${s.action}`)).toEqual([
      'lease:holding',
      'processes:skipped',
      'schema:dropped',
      'worktree:skipped',
      'lease:released'
    ])
    expect(local.child.exitCode).toBeNull()
    expect(existsSync(p.wt(0))).toBe(true)
    expect(await schemaExists(p.schema(0))).toBe(false)
    local.child.kill('SIGKILL')
  })

  test('a teardown step that fails keeps the slot held (briefly) and says what is left', async () => {
    const p = pool()
    await p.acquire('agent-a')
    const err = await releaseEnvironment(store, { ...p.opts, slot: 0, agentId: 'agent-a', database: { url: 'postgres://postgres@127.0.0.1:1/nowhere' } }).catch(
      (e: Error) => e
    )
    expect(err).toBeInstanceOf(TeardownError)
    expect((err as Error).message).toMatch(/slot 0 of "box-\d+" was not fully torn down: dropping p\d+_agent_0: cannot connect/)
    const s = await store.status(slotResource(p.opts.resource, 0))
    expect(s).toMatchObject({ live: true, owner: 'agent-a' })
    expect(s.remainingMs).toBeLessThanOrEqual(TEARDOWN_TTL_MS)
    expect(await schemaExists(p.schema(0))).toBe(true)
    // Fixed: the release goes through.
    const ok = await releaseEnvironment(store, { ...p.opts, slot: 0, agentId: 'agent-a' })
    expect(ok.lease).toBe('released')
    expect(await schemaExists(p.schema(0))).toBe(false)
  })

  test('re-acquire after a crash: the same ports, a fresh schema (the old rows are gone), a fresh worktree', async () => {
    const p = pool()
    const a = await p.acquire('agent-a')
    await insertUser(a.databaseUrl!, 'lost@example.com')
    writeFileSync(join(p.wt(0), 'half-done.txt'), 'x')
    const leftover = await startStrayServer(a.ports.dev)
    await expireBehindBack(store, slotResource(p.opts.resource, 0))

    // Without --reclaim-ports the new holder is warned about the leftover listener...
    const c = await p.acquire('agent-c')
    expect(c).toMatchObject({ slot: 0, ports: a.ports, schema: a.schema, reused: false, previousOwner: 'agent-a', previousExpired: true })
    expect(c.token).toBe(a.token + 1)
    expect(c.portsInUse.map((l) => [l.pid, l.port])).toEqual([[leftover.pid, a.ports.dev]])
    expect(c.warnings.join('\n')).toMatch(/in use by pid/)
    expect(await pgc.query(`SELECT count(*)::int AS n FROM ${p.schema(0)}.users`)).toEqual([{ n: 0 }])
    expect(c.worktree!.action).toBe('recreated')
    expect(existsSync(join(p.wt(0), 'half-done.txt'))).toBe(false)
    const id = await insertUser(c.databaseUrl!, 'new@example.com')
    expect(id).toBe(1)

    // ...and with it, the leftover is stopped.
    await expireBehindBack(store, slotResource(p.opts.resource, 0))
    const d = await p.acquire('agent-d', { reclaimPorts: true })
    expect(d.slot).toBe(0)
    expect(d.portsInUse).toEqual([])
    expect(await leftover.exited).toEqual({ code: null, signal: 'SIGTERM' })
  })

  test('renew extends only the holder\'s lease', async () => {
    const p = pool({ database: undefined, worktree: undefined })
    const a = await p.acquire('agent-a', { ttlMs: 60_000 })
    const r = await renewEnvironment(store, { resource: p.opts.resource, slot: 0, agentId: 'agent-a', ttlMs: 3 * 3_600_000 })
    expect(r.token).toBe(a.token)
    expect(r.expiresAt.getTime()).toBeGreaterThan(a.expiresAt.getTime() + 2 * 3_600_000)
    await expect(renewEnvironment(store, { resource: p.opts.resource, slot: 0, agentId: 'mallory' })).rejects.toThrow(/not held by mallory/)
  })
})

describe('env ready', () => {
  test("succeeds once the slot's dev port answers 2xx", async () => {
    const p = pool()
    const ports = environmentPorts(2, p.opts)
    const started = startStrayServer(ports.devPort)
    const ready = await waitReady({ slot: 2, port: ports.devPort, path: '/api/health', timeoutMs: 15_000 })
    expect(ready).toMatchObject({ status: 200, url: `http://127.0.0.1:${ports.devPort}/api/health` })
    ;(await started).child.kill('SIGKILL')
  })

  test('fails naming the slot and the port when nothing listens, or when it answers 503', async () => {
    const p = pool()
    const ports = environmentPorts(1, p.opts)
    const err = await waitReady({ slot: 1, port: ports.devPort, timeoutMs: 600 }).catch((e: Error) => e)
    expect(err).toBeInstanceOf(NotReadyError)
    expect((err as Error).message).toMatch(new RegExp(`^slot 1: nothing answered HTTP 2xx on port ${ports.devPort} .*ECONNREFUSED`))
    const sick = await startStrayServer(ports.devPort, { status: 503 })
    await expect(waitReady({ slot: 1, port: ports.devPort, timeoutMs: 600 })).rejects.toThrow(/slot 1: .* port \d+ .*HTTP 503/)
    sick.child.kill('SIGKILL')
  })
})
