import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { parseEnvFile } from '../../src/env/env-file'
import { CLI, runCli } from '../support/procs'
import { uniqueProject } from '../support/firestore'
import { startPostgres, TEMPLATE_MIGRATION, type TestPostgres } from '../support/postgres'
import { cloneRepo, killStrays, makeOrigin, quietPortBlock, startStrayServer, worktreePaths } from './fixtures'

/**
 * `leasefence env` end to end through the bundle (dist/cli.js, built by `npm run build`), as an agent's
 * shell script would run it.
 */
const project = uniqueProject('envcli')
const tmp = mkdtempSync(join(tmpdir(), 'leasefence-envcli-'))
let pgc: TestPostgres
let repo: string
const base = quietPortBlock(100)
const layout = ['--port-base', `dev=${base},api=${base + 30},db-proxy=${base + 60}`, '--ports-per-slot', '10']

beforeAll(async () => {
  const help = execFileSync(process.execPath, [CLI, 'env', '--help'], { encoding: 'utf8' })
  if (!help.includes('acquire')) throw new Error('dist/cli.js has no `env` command: dist/ is stale, run npm run build')
  pgc = await startPostgres()
  await pgc.query(TEMPLATE_MIGRATION)
  const { origin } = makeOrigin(tmp)
  repo = cloneRepo(origin, join(tmp, 'pool'))
})
afterAll(async () => {
  killStrays()
  await pgc?.stop()
  rmSync(tmp, { recursive: true, force: true })
})

const conn = ['--project', project]
const cli = (args: string[], cwd = repo) => runCli(args, { cwd, timeoutMs: 90_000 })

describe('leasefence env (dist/cli.js)', () => {
  test('acquire --json, ready, a live slot refused to reap, release', async () => {
    const envFile = join(tmp, 'agent-a.env')
    const acq = await cli([
      'env', 'acquire', '--resource', 'cli-box', '--slots', '2', '--agent-id', 'agent-a', ...layout, ...conn,
      '--database-url', pgc.url, '--template', 'tpl_migrated', '--worktree', '--env-out', envFile, '--json'
    ])
    expect(acq.stderr).toMatch(/leasefence env: schema: cloned: agent_0 from tpl_migrated: 3 tables/)
    expect(acq.code).toBe(0)
    const env = JSON.parse(acq.stdout)
    expect(env).toMatchObject({
      resource: 'cli-box',
      slot: 0,
      leaseResource: 'cli-box#slot-0',
      agentId: 'agent-a',
      ports: { dev: base, api: base + 30, 'db-proxy': base + 60 },
      devPort: base,
      schema: 'agent_0',
      databaseUrl: `${pgc.url}?options=-c%20search_path%3Dagent_0`,
      worktree: { path: join(tmp, 'pool/wt-agent-0'), branch: 'agent/0', action: 'created' },
      envFile,
      clone: { template: 'tpl_migrated', schema: 'agent_0', counts: { tables: 3, foreignKeys: 2, checks: 3 } }
    })
    expect(env.token).toBeGreaterThan(0)
    expect(env.env).toMatchObject({
      PORT: String(base),
      API_PORT: String(base + 30),
      DB_PROXY_PORT: String(base + 60),
      AGENT_ID: 'agent-a',
      LEASE_INDEX: '0',
      LEASEFENCE_FENCING_TOKEN: String(env.token)
    })
    expect(statSync(envFile).mode & 0o777).toBe(0o600)
    expect(parseEnvFile(readFileSync(envFile, 'utf8'))).toEqual(env.env)
    // The file is what a shell sources: the same values come out of sh.
    const fromSh = execFileSync('sh', ['-c', `set -a; . '${envFile}'; set +a; printf '%s\\n' "$PORT" "$DATABASE_URL" "$LEASE_INDEX"`], { encoding: 'utf8' })
    expect(fromSh.trim().split('\n')).toEqual([String(base), env.databaseUrl, '0'])
    expect(worktreePaths(repo)).toEqual([repo, join(tmp, 'pool/wt-agent-0')])

    // env ready: the dev port of slot 0 answers once a server runs there; slot 1's does not.
    const server = await startStrayServer(base)
    const ready = await cli(['env', 'ready', '--slot', '0', ...layout, '--path', '/api/health', '--timeout', '10s'])
    expect(ready.code).toBe(0)
    expect(ready.stdout).toMatch(new RegExp(`slot 0 ready: http://127.0.0.1:${base}/api/health answered 200`))
    const notReady = await cli(['env', 'ready', '--slot', '1', ...layout, '--timeout', '500ms'])
    expect(notReady.code).toBe(1)
    expect(notReady.stderr).toMatch(new RegExp(`slot 1: nothing answered HTTP 2xx on port ${base + 10}`))

    // A live slot is not reaped.
    const reap = await cli(['env', 'reap', '--resource', 'cli-box', '--slot', '0', ...conn, '--database-url', pgc.url])
    expect(reap.code).toBe(1)
    expect(reap.stderr).toMatch(/slot 0 of "cli-box" is held by agent-a .*never reaped/)

    // Release, with the variables of the env file (LEASEFENCE_ENV_RESOURCE, LEASE_INDEX, AGENT_ID).
    const rel = await runCli(['env', 'release', ...conn, '--database-url', pgc.url], {
      cwd: repo,
      env: { LEASEFENCE_ENV_RESOURCE: 'cli-box', LEASE_INDEX: '0', AGENT_ID: 'agent-a' }
    })
    expect(rel.stderr).toMatch(/processes: stopped: pid \d+ .* on \d+: terminated/)
    expect(rel.stderr).toMatch(/schema: dropped: agent_0/)
    expect(rel.stderr).toMatch(/worktree: removed/)
    expect(rel.code).toBe(0)
    expect(rel.stdout).toBe('slot 0 of cli-box: torn down, lease released\n')
    expect(await server.exited).toEqual({ code: null, signal: 'SIGTERM' })
    expect(await pgc.query(`SELECT 1 FROM pg_namespace WHERE nspname = 'agent_0'`)).toEqual([])
    expect(existsSync(join(tmp, 'pool/wt-agent-0'))).toBe(false)
    expect(worktreePaths(repo)).toEqual([repo])
  })

  test('KEY=value output by default; every slot busy exits 1 naming the holder; bad input exits before anything is written', async () => {
    const acq = await cli(['env', 'acquire', '--resource', 'cli-one', '--slots', '1', '--agent-id', 'agent-x', ...layout, ...conn])
    expect(acq.code).toBe(0)
    expect(acq.stdout).toMatch(new RegExp(`^PORT=${base}\nAPI_PORT=${base + 30}\nDB_PROXY_PORT=${base + 60}\nAGENT_ID=agent-x\nLEASE_INDEX=0\nLEASEFENCE_FENCING_TOKEN=\\d+\n`))
    const busy = await cli(['env', 'acquire', '--resource', 'cli-one', '--slots', '1', '--agent-id', 'agent-y', ...layout, ...conn])
    expect(busy.code).toBe(1)
    expect(busy.stderr).toMatch(/all 1 slots of "cli-one" are busy: .*held by agent-x/)

    const bad = await cli([
      'env', 'acquire', '--resource', 'cli-bad', '--slots', '1', '--agent-id', 'a', ...layout, ...conn,
      '--database-url', pgc.url, '--template', 'tpl; DROP SCHEMA public'
    ])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/template: "tpl; DROP SCHEMA public" is not a safe schema name/)
    const status = await cli(['status', ...conn, '--json', 'cli-bad#slot-0'])
    expect(JSON.parse(status.stdout)).toEqual([])

    const rel = await cli(['env', 'release', '--resource', 'cli-one', '--slot', '0', '--agent-id', 'agent-x', ...conn, '--json'])
    expect(rel.code).toBe(0)
    expect(JSON.parse(rel.stdout)).toMatchObject({ slot: 0, lease: 'released', errors: [] })
  })
})
