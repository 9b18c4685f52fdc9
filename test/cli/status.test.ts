import { afterAll, expect, test } from 'vitest'
import { makeStore, uniqueProject } from '../support/firestore'
import { runCli } from '../support/procs'

const project = uniqueProject('cli-status')
const store = makeStore(project)
afterAll(() => store.close())

test('status shows the holder, token and gate as the server sees them', async () => {
  const a = await store.acquire('cli/status-held', 'alice', { ttlMs: 60_000 })
  expect(a.acquired).toBe(true)
  await store.passGate('cli/status-held', 'alice', 1)
  const b = await store.acquire('cli/status-free', 'bob', { ttlMs: 60_000 })
  expect(b.acquired).toBe(true)
  await store.release('cli/status-free', 'bob', 1)

  const json = await runCli(['status', '--project', project, '--json', 'cli/status-held', 'cli/status-free'])
  expect(json.code, json.stderr).toBe(0)
  const rows = JSON.parse(json.stdout) as { resource: string; owner: string; token: number; live: boolean; gateToken: number; expiresInMs: number }[]
  const held = rows.find((r) => r.resource === 'cli/status-held')
  const free = rows.find((r) => r.resource === 'cli/status-free')
  expect(held).toMatchObject({ owner: 'alice', token: 1, live: true, gateToken: 1 })
  expect(held!.expiresInMs).toBeGreaterThan(30_000)
  expect(free).toMatchObject({ owner: 'bob', token: 1, live: false })

  const table = await runCli(['status', '--project', project, 'cli/status-held'])
  expect(table.code, table.stderr).toBe(0)
  expect(table.stdout).toMatch(/^RESOURCE\s+HOLDER\s+TOKEN/)
  expect(table.stdout).toMatch(/cli\/status-held\s+alice\s+1\s/)
})
