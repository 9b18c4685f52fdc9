import { readdirSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { makeStore, reset, uniqueProject } from '../support/firestore'
import { SimulatedJob } from '../support/runner'

/** Every bad input fails main with a message naming the input and what to do, and writes nothing. */
const project = uniqueProject('action-validation')
const store = makeStore(project)

beforeAll(() => reset(project))
afterAll(() => store.close())

const CASES: [string, Record<string, string>, RegExp][] = [
  ['bad ttl', { ttl: 'soon' }, /ttl: "soon" is not a duration; use a number with a unit \(500ms, 30s, 2m, 1h\) or bare seconds/],
  ['ttl too short', { ttl: '200ms' }, /ttl: 200ms is too short; use at least 1s/],
  ['heartbeat > ttl/3', { ttl: '30s', heartbeat: '11s' }, /heartbeat: 11000ms is more than a third of ttl \(30000ms\); use a heartbeat of at most 10000ms or raise ttl/],
  ['bad heartbeat', { heartbeat: 'often' }, /heartbeat: "often" is not a duration/],
  ['unknown on-busy', { 'on-busy': 'queue' }, /on-busy: "queue" is not a mode; use one of skip, wait, fail/],
  ['bad wait-timeout', { 'on-busy': 'wait', 'wait-timeout': 'a while' }, /wait-timeout: "a while" is not a duration/],
  ['zero wait-timeout', { 'on-busy': 'wait', 'wait-timeout': '0s' }, /wait-timeout: must be longer than 0/],
  ['empty owner', { owner: '  ' }, /owner: is blank; leave the input out for the default/],
  ['empty resource', { resource: ' ' }, /resource: is blank/],
  ['bad max-hold', { 'max-hold': 'never' }, /max-hold: "never" is not a duration/],
  ['bad project-id', { 'project-id': 'My Project' }, /project-id: "My Project" is not a Google Cloud project id/],
  ['bad database', { database: 'Prod DB' }, /database: "Prod DB" is not a Firestore database id/],
  ['bad collection', { collection: 'locks/a' }, /collection: "locks\/a" is not a usable collection id/],
  ['same collections', { collection: 'locks', 'gate-collection': 'locks' }, /gate-collection: must differ from collection/],
  ['bad credentials-json', { 'credentials-json': '/home/runner/key.json' }, /credentials-json: is not valid JSON \(it looks like a file path/],
  ['several at once', { ttl: '10s', heartbeat: '5s', 'on-busy': 'later' }, /2 inputs are invalid:\n- heartbeat: 5000ms is more than a third of ttl.*\n- on-busy: "later" is not a mode/]
]

describe('bad inputs fail main before anything is written', () => {
  test.each(CASES)('%s', async (_name, inputs, message) => {
    const job = new SimulatedJob({ env: { GOOGLE_CLOUD_PROJECT: project } })
    try {
      const main = await job.main({ resource: 'validation/site', ...inputs })
      expect(main.exitCode).toBe(1)
      const errors = main.annotations.filter((a) => a.level === 'error')
      expect(errors).toHaveLength(1)
      expect(errors[0].message).toMatch(/^leasefence: /)
      expect(errors[0].message).toMatch(message)
      // Nothing handed on, nothing saved, no files made under RUNNER_TEMP.
      expect(main.outputs).toEqual({})
      expect(main.env).toEqual({})
      expect(main.paths).toEqual([])
      expect(main.state).toEqual({})
      expect(readdirSync(job.runnerTemp).filter((f) => f.startsWith('leasefence'))).toEqual([])
      if (inputs['credentials-json']) expect(main.stdout).not.toContain('::add-mask::')
      const post = await job.post()
      expect(post.exitCode).toBe(0)
      expect(post.log.trim()).toBe('leasefence: main did not get as far as preparing a lease; nothing to do')
    } finally {
      expect((await job.end()).killed).toEqual([])
    }
  })

  test('no lease or gate document exists in the project (while a valid job in it does write one)', async () => {
    expect((await store.db.listCollections()).map((c) => c.id)).toEqual([])
    // The control: the same job setup with good inputs writes to this very project.
    const job = new SimulatedJob({ env: { GOOGLE_CLOUD_PROJECT: project } })
    try {
      const main = await job.main({ resource: 'validation/site' })
      expect(main.exitCode, main.log).toBe(0)
      await job.post()
    } finally {
      expect((await job.end()).killed).toEqual([])
    }
    expect((await store.db.listCollections()).map((c) => c.id)).toEqual(['leases'])
  })
})
