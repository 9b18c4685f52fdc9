import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { makeStore, reset, uniqueProject } from '../support/firestore'
import { expectGone, processAlive, SimulatedJob } from '../support/runner'

/** Two (or three) jobs on one resource, each step a process of the committed bundle. */
const project = uniqueProject('action-busy')
const store = makeStore(project)
const jobs: SimulatedJob[] = []

function job(n: number, env: Record<string, string> = {}): SimulatedJob {
  // GOOGLE_CLOUD_PROJECT is what google-github-actions/auth exports; the action finds the project there.
  const j = new SimulatedJob({ job: `publish-${n}`, env: { GOOGLE_CLOUD_PROJECT: project, ...env } })
  jobs.push(j)
  return j
}

beforeAll(() => reset(project))
afterEach(async () => {
  // The runner's backstop at job end: nothing of ours may be left for it to kill.
  for (const j of jobs.splice(0)) expect((await j.end()).killed, 'post must have stopped every process of the job').toEqual([])
})
afterAll(() => store.close())

describe('two jobs on one resource', () => {
  test('on-busy skip (default): acquired=false, a notice naming the holder and its run; exit 0', async () => {
    const a = job(1)
    const mainA = await a.main({ resource: 'busy/skip', ttl: '5s' })
    expect(mainA.exitCode, mainA.log).toBe(0)
    expect(mainA.outputs).toMatchObject({ acquired: 'true', 'fencing-token': '1', resource: 'busy/skip' })
    expect(mainA.stdioHeld, 'the heartbeat must not hold the step output open').toBe(false)
    expect(mainA.durationMs).toBeLessThan(10_000)
    // Who holds it, for the others' notices and for `leasefence status`.
    expect((await store.status('busy/skip')).holder).toEqual({
      kind: 'github-actions',
      runUrl: `https://github.com/octo-org/site/actions/runs/${a.context.run_id}/attempts/1`,
      repository: 'octo-org/site',
      runId: a.context.run_id,
      runAttempt: '1',
      workflow: 'Scheduled publish',
      job: 'publish-1',
      actor: 'octocat',
      runner: `simulated-runner-${process.pid}`
    })

    const b = job(2)
    const mainB = await b.main({ resource: 'busy/skip', ttl: '5s' })
    expect(mainB.exitCode, mainB.log).toBe(0)
    expect(mainB.outputs).toMatchObject({ acquired: 'false', holder: mainA.outputs.owner })
    expect(mainB.outputs['fencing-token']).toBeUndefined()
    const notices = mainB.annotations.filter((x) => x.level === 'notice')
    expect(notices).toHaveLength(1)
    expect(notices[0].message).toContain(mainA.outputs.owner)
    expect(notices[0].message).toContain(`https://github.com/octo-org/site/actions/runs/${a.context.run_id}/attempts/1`)
    expect(notices[0].properties.title).toBe('leasefence: lease busy')
    expect(mainB.env, 'a skipped job exports nothing').toEqual({})
    expect(mainB.paths).toEqual([])
    expect(mainB.state.phase).toBe('skipped')

    const postB = await b.post()
    expect(postB.exitCode).toBe(0)
    expect(postB.log.trim()).toBe(`leasefence: the lease on "busy/skip" was not acquired by this job (held by ${mainA.outputs.owner}); nothing to release`)
    expect(postB.summary).toBe('')

    const pid = Number(mainA.state['heartbeat-pid'])
    expect(processAlive(pid)).toBe(true)
    const postA = await a.post()
    expect(postA.exitCode, postA.log).toBe(0)
    expectGone(pid)
    expect(postA.annotations.filter((x) => x.level !== 'debug')).toEqual([])
    expect(postA.summary).toContain('held and released')
    expect((await store.status('busy/skip')).live).toBe(false)
  })

  test('on-busy fail: the step fails naming the holder', async () => {
    const a = job(1)
    const mainA = await a.main({ resource: 'busy/fail', ttl: '5s' })
    expect(mainA.outputs.acquired).toBe('true')
    const b = job(2)
    const mainB = await b.main({ resource: 'busy/fail', ttl: '5s', 'on-busy': 'fail' })
    expect(mainB.exitCode).toBe(1)
    expect(mainB.outputs).toMatchObject({ acquired: 'false', holder: mainA.outputs.owner })
    const errors = mainB.annotations.filter((x) => x.level === 'error')
    expect(errors).toHaveLength(1)
    expect(errors[0].message).toMatch(/^leasefence: "busy\/fail" is held by .* with token 1, expiring in .*; on-busy is fail/)
    expect((await b.post()).exitCode).toBe(0)
    await a.post()
  })

  test('on-busy wait: acquires within a couple of seconds of the holder\'s post', async () => {
    const a = job(1)
    const mainA = await a.main({ resource: 'busy/wait', ttl: '30s' })
    expect(mainA.outputs.acquired).toBe('true')
    const b = job(2)
    const waiting = b.main({ resource: 'busy/wait', ttl: '30s', 'on-busy': 'wait', 'wait-timeout': '1m' })
    await new Promise((r) => setTimeout(r, 2500))
    const postA = await a.post()
    const releasedAt = Date.now()
    expect(postA.log).toMatch(/released after holding it for/)
    const mainB = await waiting
    const lag = Date.now() - releasedAt
    expect(mainB.exitCode, mainB.log).toBe(0)
    expect(mainB.outputs).toMatchObject({ acquired: 'true', 'fencing-token': '2' })
    // The ttl is 30 s: only the release (seen through the listener) can have let it in this soon.
    expect(lag).toBeLessThan(2500)
    expect(mainB.log).toMatch(/waiting \(\S+ so far[^)]*\): "busy\/wait" is held by/)
    const postB = await b.post()
    expect(postB.summary).toMatch(/\| Waited for \| \d/)
    expect(postB.exitCode).toBe(0)
  })

  test('on-busy wait: fails after wait-timeout, naming the holder', async () => {
    const a = job(1)
    await a.main({ resource: 'busy/timeout', ttl: '30s' })
    const b = job(2)
    const started = Date.now()
    const mainB = await b.main({ resource: 'busy/timeout', ttl: '30s', 'on-busy': 'wait', 'wait-timeout': '2s' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000)
    expect(mainB.exitCode).toBe(1)
    expect(mainB.outputs).toMatchObject({ acquired: 'false' })
    expect(mainB.outputs.holder).toBe(a.steps[0].outputs.owner)
    expect(mainB.annotations.find((x) => x.level === 'error')?.message).toMatch(/waited 2(\.\d)?s for "busy\/timeout" is held by .*raise wait-timeout or use on-busy: skip/)
    expect((await b.post()).exitCode).toBe(0)
    await a.post()
  })
})
