import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import type { HeartbeatStatus } from '../../src/action/state'
import { makeStore, reset, uniqueProject } from '../support/firestore'
import { expectGone, SimulatedJob } from '../support/runner'

/** One job holding the lease across steps: heartbeat, later steps' environment, post after a failure. */
const project = uniqueProject('action-hold')
const store = makeStore(project)
const jobs: SimulatedJob[] = []

function job(n: number, opts: { env?: Record<string, string> } = {}): SimulatedJob {
  const j = new SimulatedJob({ job: `hold-${n}`, env: { GOOGLE_CLOUD_PROJECT: project, ...opts.env } })
  jobs.push(j)
  return j
}

function heartbeatStatus(j: SimulatedJob): HeartbeatStatus {
  return JSON.parse(readFileSync(join(j.exportedEnv.LEASEFENCE_STATE_DIR, 'heartbeat.json'), 'utf8')) as HeartbeatStatus
}

beforeAll(() => reset(project))
afterEach(async () => {
  for (const j of jobs.splice(0)) expect((await j.end()).killed, 'post must have stopped every process of the job').toEqual([])
})
afterAll(() => store.close())

describe('holding the lease across steps', () => {
  test('4 x ttl of sleeping steps: the lease stays, others stay busy, no renewal fails', async () => {
    const a = job(1)
    const mainA = await a.main({ resource: 'hold/long', ttl: '2s' })
    expect(mainA.exitCode, mainA.log).toBe(0)
    const started = Date.now()
    for (let i = 0; i < 4; i++) {
      const step = await a.shell('sleep 2')
      expect(step.exitCode).toBe(0)
      const other = job(10 + i)
      const busy = await other.main({ resource: 'hold/long', ttl: '2s' })
      expect(busy.outputs, `after ${Date.now() - started}ms`).toMatchObject({ acquired: 'false', holder: mainA.outputs.owner })
      await other.post()
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(8000)
    // Still holding: the CLI on PATH passes the gate with the same token.
    const pub = await a.shell('leasefence publish -- true')
    expect(pub.exitCode, pub.log).toBe(0)
    const s = await store.status('hold/long')
    expect(s).toMatchObject({ live: true, owner: mainA.outputs.owner, token: 1 })

    const hb = heartbeatStatus(a)
    expect(hb).toMatchObject({ ready: true, failures: 0, lost: false })
    // ~8 s at one renewal per 666 ms, plus the one at start.
    expect(hb.renewals).toBeGreaterThanOrEqual(8)

    const postA = await a.post()
    expect(postA.exitCode).toBe(0)
    expect(postA.summary).toMatch(/\| Heartbeats \| \d+ sent, 0 failed \|/)
    expect(postA.summary).toContain('| Gate passes | 1 |')
    expect(postA.summary).toContain('| Fencing token | 1 |')
    const held = /\| Held for \| (\d+(?:\.\d)?)s \|/.exec(postA.summary)
    expect(Number(held?.[1])).toBeGreaterThanOrEqual(8)
    expectGone(Number(mainA.state['heartbeat-pid']))
  })

  test('later steps get the lease in their environment and the CLI on PATH, run by the action\'s node', async () => {
    const a = job(1)
    const mainA = await a.main({ resource: 'hold/env', ttl: '10s' })
    expect(mainA.env).toMatchObject({
      LEASEFENCE_RESOURCE: 'hold/env',
      LEASEFENCE_OWNER: mainA.outputs.owner,
      LEASEFENCE_FENCING_TOKEN: '1',
      LEASEFENCE_PROJECT: project,
      LEASEFENCE_DATABASE: '(default)',
      LEASEFENCE_COLLECTION: 'leases',
      LEASEFENCE_GATE_COLLECTION: 'publish_gate'
    })
    expect(mainA.env.LEASEFENCE_STATE_DIR.startsWith(a.runnerTemp)).toBe(true)
    expect(mainA.paths).toHaveLength(1)
    expect(mainA.paths[0].startsWith(a.runnerTemp)).toBe(true)
    const wrapper = readFileSync(join(mainA.paths[0], 'leasefence'), 'utf8')
    expect(wrapper).toContain(`exec '${process.execPath}' '`)
    expect(wrapper).toMatch(/dist\/cli\.js' "\$@"/)

    const step = await a.shell('command -v leasefence; echo "token=$LEASEFENCE_FENCING_TOKEN"; leasefence status --json "$LEASEFENCE_RESOURCE"')
    expect(step.exitCode, step.log).toBe(0)
    expect(step.stdout).toContain(join(mainA.paths[0], 'leasefence'))
    expect(step.stdout).toContain('token=1')
    const rows = JSON.parse(step.stdout.slice(step.stdout.indexOf('['))) as { owner: string; live: boolean }[]
    expect(rows[0]).toMatchObject({ owner: mainA.outputs.owner, live: true })
    await a.post()
  })

  test('post runs after a failed step and releases; the next job\'s token is exactly one higher', async () => {
    const a = job(1)
    const mainA = await a.main({ resource: 'hold/failed-step', ttl: '30s' })
    const token = Number(mainA.outputs['fencing-token'])
    const failed = await a.shell('echo generating; exit 3')
    expect(failed.exitCode).toBe(3)
    const postA = await a.post()
    expect(postA.exitCode).toBe(0)
    expect(postA.log).toMatch(/released after holding it for/)
    expectGone(Number(mainA.state['heartbeat-pid']))

    // Released, not expired: the next job gets it at once although the ttl is 30 s.
    const b = job(2)
    const mainB = await b.main({ resource: 'hold/failed-step', ttl: '30s' })
    expect(mainB.outputs).toMatchObject({ acquired: 'true', 'fencing-token': String(token + 1) })
    expect(mainB.log).toMatch(/previous holder .* had released it/)
    await b.post()
  })

  test('a resource with slashes and unicode', async () => {
    const resource = 'docs/ünïcødé/🚀 site/../x%2F__y__'
    const a = job(1)
    const mainA = await a.main({ resource, ttl: '5s' })
    expect(mainA.outputs).toMatchObject({ acquired: 'true', resource })
    const b = job(2)
    expect((await b.main({ resource, ttl: '5s' })).outputs).toMatchObject({ acquired: 'false', holder: mainA.outputs.owner })
    await b.post()
    const pub = await a.uses('publish', { run: 'echo "published $LEASEFENCE_RESOURCE"' })
    expect(pub.exitCode, pub.log).toBe(0)
    expect(pub.outputs.published).toBe('true')
    expect(pub.stdout).toContain(`published ${resource}`)
    expect(await store.gateStatus(resource)).toMatchObject({ resource, fencing: 1 })
    const postA = await a.post()
    expect(postA.summary).toContain('🚀 site')
    expect((await store.status(resource)).live).toBe(false)
  })

  test('credentials-json: masked, a 0600 file under RUNNER_TEMP for the job, deleted in post', async () => {
    const key = {
      type: 'service_account',
      project_id: project,
      private_key_id: '0123456789abcdef0123',
      private_key: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDtest\n-----END PRIVATE KEY-----\n',
      client_email: 'leasefence@example.iam.gserviceaccount.com',
      client_id: '1'
    }
    const text = JSON.stringify(key)
    // No GOOGLE_CLOUD_PROJECT: the project comes from the key.
    const a = new SimulatedJob({ job: 'creds' })
    jobs.push(a)
    const mainA = await a.main({ resource: 'hold/creds', ttl: '5s', 'credentials-json': text })
    expect(mainA.exitCode, mainA.log).toBe(0)
    expect(mainA.masks).toContain(text)
    expect(mainA.masks).toContain('MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDtest')
    expect(mainA.masks).toContain(key.private_key_id)
    const logged = mainA.stdout.split('\n').filter((l) => !l.startsWith('::add-mask::'))
    expect(logged.join('\n')).not.toContain('MIIEvQ')
    const file = mainA.env.LEASEFENCE_CREDENTIALS_FILE
    expect(file.startsWith(a.runnerTemp)).toBe(true)
    expect(mainA.env.LEASEFENCE_PROJECT).toBe(project)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(key)
    // The daemon's config holds the path, never the key.
    expect(readFileSync(join(mainA.env.LEASEFENCE_STATE_DIR, 'heartbeat-config.json'), 'utf8')).not.toContain('PRIVATE KEY')
    const pub = await a.shell('leasefence publish -- true')
    expect(pub.exitCode, pub.log).toBe(0)
    const postA = await a.post()
    expect(postA.exitCode).toBe(0)
    expect(existsSync(file)).toBe(false)
    expect(postA.log).toContain('removed the credentials file')
  })

  test('max-hold: a heartbeat whose post never comes stops by itself and releases; post still succeeds', async () => {
    const a = job(1)
    const mainA = await a.main({ resource: 'hold/max-hold', ttl: '2s', 'max-hold': '3s' })
    expect(mainA.exitCode, mainA.log).toBe(0)
    const pid = Number(mainA.state['heartbeat-pid'])
    await a.shell('sleep 3')
    // The daemon gives up by itself (no post has run): poll for it, a loaded machine may be slow.
    for (let i = 0; i < 200 && !heartbeatStatus(a).exitedAt; i++) await new Promise((r) => setTimeout(r, 50))
    expect(heartbeatStatus(a)).toMatchObject({ lost: true, released: true, failures: 0 })
    expect(heartbeatStatus(a).lostReason).toMatch(/stopped after max-hold \(3s\) and released the lease/)
    await new Promise((r) => setTimeout(r, 500))
    expectGone(pid)
    expect((await store.status('hold/max-hold')).live).toBe(false)
    // Publishing after that is refused at once (the lost marker).
    const pub = await a.shell('leasefence publish -- echo never')
    expect(pub.exitCode).toBe(75)
    expect(pub.stdout).not.toContain('never')
    const postA = await a.post()
    expect(postA.exitCode).toBe(0)
    expect(postA.log).toContain('had already exited')
    expect(postA.annotations.find((x) => x.properties.title === 'leasefence: lease lost')?.message).toMatch(/max-hold/)
    // The next job gets it at once, one token higher.
    const b = job(2)
    expect((await b.main({ resource: 'hold/max-hold', ttl: '5s' })).outputs).toMatchObject({ acquired: 'true', 'fencing-token': '2' })
    await b.post()
  })

  test('a job cancelled while waiting: main stops waiting and fails, post has nothing to release', async () => {
    const a = job(1)
    const mainA = await a.main({ resource: 'hold/cancel', ttl: '30s' })
    const b = job(2)
    // The runner sends SIGINT to a step when the run is cancelled.
    const mainB = await b.main({ resource: 'hold/cancel', 'on-busy': 'wait', 'wait-timeout': '1m' }, { cancelAfterMs: 2000 })
    expect(mainB.durationMs).toBeLessThan(7000)
    expect(mainB.exitCode).toBe(1)
    expect(mainB.annotations.find((x) => x.level === 'error')?.message).toMatch(/stopped waiting for "hold\/cancel"/)
    expect(mainB.outputs).toMatchObject({ acquired: 'false', holder: mainA.outputs.owner })
    const postB = await b.post()
    expect(postB.exitCode).toBe(0)
    expect(postB.log).toMatch(/did not acquire the lease/)
    expect(await store.status('hold/cancel')).toMatchObject({ owner: mainA.outputs.owner, token: 1, live: true })
    await a.post()
  })
})
