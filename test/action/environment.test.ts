import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { slotResource } from '../../src/core/resource-id'
import { parseEnvFile } from '../../src/env/env-file'
import { makeOrigin, quietPortBlock } from '../env/fixtures'
import { makeStore, uniqueProject } from '../support/firestore'
import { readLeaseDoc } from '../support/lease-helpers'
import { startPostgres, TEMPLATE_MIGRATION, type TestPostgres } from '../support/postgres'
import { SimulatedJob } from '../support/runner'

/**
 * The action's environment mode (env-slots) as the runner runs it: real Firestore emulator, real
 * PostgreSQL, real git worktrees. The provisioning itself is tested in test/env; this proves the wiring:
 * inputs → outputs → env file → post teardown (or env-keep).
 */
const project = uniqueProject('action-env')
const store = makeStore(project)
const tmp = mkdtempSync(join(tmpdir(), 'leasefence-action-env-'))
const jobs: SimulatedJob[] = []
let pgc: TestPostgres
let origin: string
const BASE = quietPortBlock(200)

beforeAll(async () => {
  pgc = await startPostgres()
  await pgc.query(TEMPLATE_MIGRATION)
  origin = makeOrigin(tmp).origin
})
afterEach(async () => {
  for (const j of jobs.splice(0)) expect((await j.end()).killed).toEqual([])
})
afterAll(async () => {
  await store.close()
  await pgc?.stop()
  rmSync(tmp, { recursive: true, force: true })
})

function job(n: number): SimulatedJob {
  const j = new SimulatedJob({ job: `agent-${n}`, env: { GOOGLE_CLOUD_PROJECT: project } })
  // Each job's workspace is a checkout of the repository, as actions/checkout leaves it.
  execFileSync('git', ['clone', '-q', origin, j.workspace])
  jobs.push(j)
  return j
}

const schemaExists = async (name: string) => (await pgc.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [name])).length > 0

describe('env-slots', () => {
  test('two jobs get disjoint environments; post tears its own down, env-keep leaves it', async () => {
    const inputs = (j: SimulatedJob, extra: Record<string, string> = {}) => ({
      resource: 'agents/box',
      'env-slots': '2',
      'env-database-url': pgc.url,
      'env-template': 'tpl_migrated',
      'env-worktree': 'true',
      'env-port-bases': `dev=${BASE},api=${BASE + 40},db-proxy=${BASE + 80}`,
      'schema-prefix': 'act_agent_',
      'env-file': join(j.workspace, '.env.agent'),
      ttl: '20s',
      ...extra
    })
    const a = job(1)
    const ma = await a.main(inputs(a))
    expect(ma.exitCode, ma.log).toBe(0)
    expect(ma.outputs).toMatchObject({ acquired: 'true', slot: '0', port: String(BASE), 'api-port': String(BASE + 40), schema: 'act_agent_0', 'fencing-token': '1' })
    expect(ma.masks).toContain(pgc.url)
    expect(existsSync(ma.outputs.worktree)).toBe(true)
    expect(ma.env.LEASEFENCE_RESOURCE).toBe(slotResource('agents/box', 0))
    const file = parseEnvFile(readFileSync(join(a.workspace, '.env.agent'), 'utf8'))
    expect(file.PORT).toBe(String(BASE))
    expect(file.DATABASE_URL).toContain('search_path%3Dact_agent_0')
    expect(await schemaExists('act_agent_0')).toBe(true)

    const b = job(2)
    const mb = await b.main(inputs(b, { 'env-keep': 'true' }))
    expect(mb.outputs).toMatchObject({ acquired: 'true', slot: '1', port: String(BASE + 10), schema: 'act_agent_1' })

    // A later step uses the environment; the lease of its slot is kept alive across steps.
    const step = await a.shell('. ./.env.agent && echo "port=$PORT schema in url: ${DATABASE_URL##*search_path%3D}"')
    expect(step.log).toContain(`port=${BASE} schema in url: act_agent_0`)

    const pa = await a.post()
    expect(pa.exitCode, pa.log).toBe(0)
    expect(pa.log).toMatch(/environment of slot 0 torn down/)
    expect(await schemaExists('act_agent_0')).toBe(false)
    expect(existsSync(ma.outputs.worktree)).toBe(false)
    expect((await readLeaseDoc(store, slotResource('agents/box', 0))).data?.releasedAt).toBeTruthy()

    const pb = await b.post()
    expect(pb.exitCode, pb.log).toBe(0)
    expect(await schemaExists('act_agent_1')).toBe(true)
    expect((await readLeaseDoc(store, slotResource('agents/box', 1))).data?.releasedAt).toBeTruthy()
  })

  test('bad environment inputs fail main before anything is written', async () => {
    const j = job(3)
    const r = await j.main({ resource: 'agents/bad', 'env-slots': '2', 'env-database-url': pgc.url, 'env-template': 'Bad-Name;' })
    expect(r.exitCode).toBe(1)
    expect(r.log).toMatch(/env-template: "Bad-Name;" is not a safe schema name/)
    expect((await readLeaseDoc(store, slotResource('agents/bad', 0))).exists).toBe(false)
  })
})
