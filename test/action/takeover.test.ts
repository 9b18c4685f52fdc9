import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Timestamp } from '@google-cloud/firestore'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { makeStore, reset, uniqueProject } from '../support/firestore'
import { expectGone, IDENTITY, LocalRemote, SimulatedJob } from '../support/runner'

/**
 * A holder whose lease is taken over behind its back (as if its runner had been paused past the ttl):
 * the new holder publishes; the old one is fenced off by both publish paths and its post leaves the new
 * holder's lease alone.
 */
const project = uniqueProject('action-takeover')
const store = makeStore(project)
const jobs: SimulatedJob[] = []
const remote = new LocalRemote()
const scratch = mkdtempSync(join(tmpdir(), 'leasefence-takeover-'))
const GIT = IDENTITY.join(' ')

function job(name: string): SimulatedJob {
  const j = new SimulatedJob({ job: name, env: { GOOGLE_CLOUD_PROJECT: project } })
  jobs.push(j)
  return j
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

beforeAll(() => reset(project))
afterEach(async () => {
  for (const j of jobs.splice(0)) expect((await j.end()).killed, 'no process may be left for the job-end backstop').toEqual([])
})
afterAll(async () => {
  await store.close()
  remote.cleanup()
  rmSync(scratch, { recursive: true, force: true })
})

test('a taken-over holder cannot publish, and its post leaves the new holder alone', async () => {
  const resource = 'takeover/site'
  const old = job('old-holder')
  const mainOld = await old.main({ resource, ttl: '3s' })
  expect(mainOld.outputs).toMatchObject({ acquired: 'true', 'fencing-token': '1' })
  const commitOld = await old.shell(
    `git clone -q "${remote.bare}" . && echo "old holder" >> site.txt && git ${GIT} commit -qam "by the old holder" -m "Lease-Fencing-Token: $LEASEFENCE_FENCING_TOKEN"`
  )
  expect(commitOld.exitCode, commitOld.log).toBe(0)

  // Behind its back: the lease expires (as if the holder's runner had stalled past the ttl).
  await store.leaseRef(resource).update({ expiresAt: Timestamp.fromMillis(Date.now() - 60_000) })

  const fresh = job('new-holder')
  const mainNew = await fresh.main({ resource, ttl: '20s' })
  expect(mainNew.outputs).toMatchObject({ acquired: 'true', 'fencing-token': '2' })
  expect(mainNew.log).toContain(`took over from ${mainOld.outputs.owner}, whose lease had expired without a release`)
  const pubNew = await fresh.shell(
    `git clone -q "${remote.bare}" . && echo "new holder" >> site.txt && git ${GIT} commit -qam "by the new holder" -m "Lease-Fencing-Token: $LEASEFENCE_FENCING_TOKEN" && ` +
      'leasefence publish -- git push -q origin HEAD:main'
  )
  expect(pubNew.exitCode, pubNew.log).toBe(0)

  // The old holder's heartbeat finds out on its next renewal, leaves the lost marker and exits.
  const oldDir = old.exportedEnv.LEASEFENCE_STATE_DIR
  await until('the lost marker', () => existsSync(join(oldDir, 'lost')))
  const oldPid = Number(mainOld.state['heartbeat-pid'])
  await until('the old heartbeat to exit', () => {
    try {
      expectGone(oldPid)
      return true
    } catch {
      return false
    }
  })

  // 1. The CLI from a shell step: exit 75, git push never ran.
  const cli = await old.shell('leasefence publish -- git push origin HEAD:main')
  expect(cli.exitCode).toBe(75)
  // The heartbeat saw either the expiry (if it renewed before the takeover) or the new holder.
  const LOST = '(taken over by .*new-holder.* with token 2|it expired at .*)'
  expect(cli.stderr).toMatch(new RegExp(`publish refused, not running git: lease on "takeover/site" with token 1 is lost: the heartbeat reported it lost: ${LOST}`))

  // 2. The publish sub-action: fails, its command does not run.
  const sub = await old.uses('publish', { run: 'touch "$RUNNER_TEMP/ran" && git push origin HEAD:main' })
  expect(sub.exitCode).toBe(75)
  expect(sub.outputs.published).toBe('false')
  expect(existsSync(join(old.runnerTemp, 'ran'))).toBe(false)
  expect(sub.annotations.find((a) => a.level === 'error')?.message).toMatch(
    new RegExp(`^leasefence: publish refused, the command did not run: this job's lease \\(token 1\\) is lost: the heartbeat reported it lost: ${LOST}`)
  )

  // 3. Even without the marker (a heartbeat that has not noticed yet), the gate itself refuses and says who won.
  const noMarker = await old.uses('publish', { run: 'touch "$RUNNER_TEMP/ran" && git push origin HEAD:main' }, { env: { LEASEFENCE_STATE_DIR: scratch } })
  expect(noMarker.exitCode).toBe(75)
  expect(existsSync(join(old.runnerTemp, 'ran'))).toBe(false)
  expect(noMarker.annotations.find((a) => a.level === 'error')?.message).toMatch(
    new RegExp(`token 2 \\(owner ${mainNew.outputs.owner.replace(/[/.]/g, '\\$&')}\\) already passed the gate, so this job's token 1 is stale`)
  )
  const cliNoMarker = await old.shell('leasefence publish -- git push origin HEAD:main', { env: { LEASEFENCE_STATE_DIR: scratch } })
  expect(cliNoMarker.exitCode).toBe(75)

  // The old holder's commit never reached the remote.
  const log = remote.log()
  expect(log.map((c) => c.subject)).toEqual(['by the new holder', 'seed'])
  expect(log[0].body).toContain('Lease-Fencing-Token: 2')
  expect(remote.file('site.txt')).toBe('site\nnew holder\n')

  // (The two refusals without the marker were counted in the scratch directory they were given.)
  // The old holder's post: the new holder's lease document is not touched at all (its heartbeat is
  // paused meanwhile, so that no renewal changes it either).
  const newPid = Number(mainNew.state['heartbeat-pid'])
  process.kill(newPid, 'SIGSTOP')
  let postOld
  let before, after
  try {
    before = await store.leaseRef(resource).get()
    postOld = await old.post()
    after = await store.leaseRef(resource).get()
  } finally {
    process.kill(newPid, 'SIGCONT')
  }
  expect(postOld.exitCode, postOld.log).toBe(0)
  expect(after.updateTime!.isEqual(before.updateTime!)).toBe(true)
  expect(after.data()).toEqual(before.data())
  expect(after.data()).toMatchObject({ owner: mainNew.outputs.owner, fencing: 2, releasedAt: null })
  const warnings = postOld.annotations.filter((a) => a.level === 'warning')
  expect(warnings.map((w) => w.properties.title)).toEqual(['leasefence: lease lost', 'leasefence: publish refused', 'leasefence: publish refused'])
  expect(warnings[0].message).toMatch(new RegExp(`The lease on "takeover/site" \\(token 1\\) was lost during the job: ${LOST}`))
  expect(postOld.summary).toMatch(/needs attention/)
  expect(postOld.summary).toContain('| Gate passes | 0, 2 refused |')
  expect(postOld.summary).toMatch(/\| Outcome \| lease lost during the job .*not released: now held by .*new-holder.* with token 2; left untouched \|/)
  expect(postOld.annotations.filter((a) => a.level === 'error')).toEqual([])

  // The new holder finishes normally.
  const postNew = await fresh.post()
  expect(postNew.exitCode).toBe(0)
  expect(postNew.summary).toContain('| Gate passes | 1 |')
  expect(postNew.summary).toContain('held and released')
  expectGone(newPid)
})
