import { rmSync } from 'node:fs'
import { afterAll, beforeEach, describe, expect, test } from 'vitest'
import { makeStore, uniqueProject } from '../support/firestore'
import { GIT_ENV, gitFixture, git, type GitFixture } from '../support/git'
import { expireBehindBack } from '../support/lease-helpers'
import { CLI, runCli } from '../support/procs'

/**
 * `leasefence publish -- git push ...` into a real (local, bare) git remote: a holder that was taken
 * over must not move the remote's refs (exit 75); the current holder pushes (exit 0).
 */
const project = uniqueProject('cli-publish')
const store = makeStore(project)
const fixtures: GitFixture[] = []
afterAll(async () => {
  await store.close()
  for (const f of fixtures) rmSync(f.dir, { recursive: true, force: true })
})

let fx: GitFixture
beforeEach(() => {
  fx = gitFixture()
  fixtures.push(fx)
})

async function acquire(resource: string, owner: string): Promise<number> {
  const r = await store.acquire(resource, owner, { ttlMs: 60_000 })
  if (!r.acquired) throw new Error(`${owner} could not acquire ${resource}`)
  return r.lease.token
}

function publish(clone: string, resource: string, owner: string, token: number | string) {
  return runCli(
    ['publish', '--project', project, '--resource', resource, '--owner', owner, '--token', String(token), '--', 'git', 'push', '-q', 'origin', 'HEAD:main'],
    { cwd: clone, env: GIT_ENV }
  )
}

describe('leasefence publish -- git push', () => {
  test('a holder taken over (and outrun at the gate) exits 75 and the remote does not change', async () => {
    const res = 'cli/publish-stale'
    const alice = fx.clone('alice')
    const bob = fx.clone('bob')
    const aliceToken = await acquire(res, 'alice')
    fx.commit(alice, 'site.txt', 'alice v1\n')

    // alice pauses; her lease expires behind her back; bob takes over and publishes first.
    await expireBehindBack(store, res)
    const bobToken = await acquire(res, 'bob')
    const bobHead = fx.commit(bob, 'site.txt', 'bob v2\n')
    const bobPush = await publish(bob, res, 'bob', bobToken)
    expect(bobPush.code, bobPush.stderr).toBe(0)
    expect(git(fx.remote, 'rev-parse', 'main')).toBe(bobHead)

    const before = fx.remoteRefs()
    const stale = await publish(alice, res, 'alice', aliceToken)
    expect(stale.code).toBe(75)
    expect(stale.stderr).toContain('leasefence: publish refused, not running git')
    expect(stale.stderr).toContain(`fencing token ${aliceToken} for "${res}" is stale: token ${bobToken} (owner bob)`)
    expect(fx.remoteRefs()).toBe(before)
    expect(git(fx.remote, 'rev-parse', 'main')).toBe(bobHead)
    expect(await store.gateStatus(res)).toMatchObject({ fencing: bobToken, owner: 'bob' })
  })

  test('a holder taken over before the new holder published is refused too (exit 75, remote unchanged)', async () => {
    const res = 'cli/publish-lost'
    const alice = fx.clone('alice')
    const aliceToken = await acquire(res, 'alice')
    fx.commit(alice, 'site.txt', 'alice v1\n')
    await expireBehindBack(store, res)
    const bobToken = await acquire(res, 'bob')

    const before = fx.remoteRefs()
    const stale = await publish(alice, res, 'alice', aliceToken)
    expect(stale.code).toBe(75)
    expect(stale.stderr).toContain(`is lost: taken over by bob with token ${bobToken}`)
    expect(fx.remoteRefs()).toBe(before)
    expect(await store.gateStatus(res)).toBeUndefined()
  })

  test("the current holder's publish pushes and exits 0; the lease can come from the environment", async () => {
    const res = 'cli/publish-ok'
    const clone = fx.clone('holder')
    const token = await acquire(res, 'carol')
    const head = fx.commit(clone, 'site.txt', 'carol v1\n')
    const before = fx.remoteRefs()
    const r = await runCli(['publish', '--', 'git', 'push', '-q', 'origin', 'HEAD:main'], {
      cwd: clone,
      env: {
        ...GIT_ENV,
        LEASEFENCE_PROJECT: project,
        LEASEFENCE_RESOURCE: res,
        LEASEFENCE_OWNER: 'carol',
        LEASEFENCE_FENCING_TOKEN: String(token)
      }
    })
    expect(r.code, r.stderr).toBe(0)
    expect(fx.remoteRefs()).not.toBe(before)
    expect(git(fx.remote, 'rev-parse', 'main')).toBe(head)
    expect(await store.gateStatus(res)).toMatchObject({ fencing: token, owner: 'carol', passes: 1 })
  })

  test("publish returns the command's own exit code when the gate passed", async () => {
    const res = 'cli/publish-code'
    const token = await acquire(res, 'dave')
    const r = await runCli(['publish', '--project', project, '--resource', res, '--owner', 'dave', '--token', String(token), '--', 'sh', '-c', 'exit 3'])
    expect(r.code).toBe(3)
  })

  test('inside `leasefence run`, publish picks up the lease and pushes', async () => {
    const res = 'cli/run-publish'
    const clone = fx.clone('runner')
    const head = fx.commit(clone, 'site.txt', 'runner v1\n')
    const script = `"${process.execPath}" "${CLI}" publish -- git push -q origin HEAD:main`
    const r = await runCli(['run', '--project', project, '--resource', res, '--ttl', '30s', '--', 'sh', '-c', script], {
      cwd: clone,
      env: GIT_ENV
    })
    expect(r.code, r.stderr).toBe(0)
    expect(git(fx.remote, 'rev-parse', 'main')).toBe(head)
    const gate = await store.gateStatus(res)
    expect(gate).toMatchObject({ fencing: 1, passes: 1 })
    // run released the lease afterwards, keeping the token
    const s = await store.status(res)
    expect(s).toMatchObject({ live: false, token: 1 })
  })

  test('publish without a lease is refused before anything runs (exit 1)', async () => {
    const clone = fx.clone('nobody')
    fx.commit(clone, 'site.txt', 'nobody\n')
    const before = fx.remoteRefs()
    const r = await runCli(['publish', '--project', project, '--', 'git', 'push', '-q', 'origin', 'HEAD:main'], { cwd: clone, env: GIT_ENV })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('publish needs a lease')
    expect(fx.remoteRefs()).toBe(before)
  })
})
