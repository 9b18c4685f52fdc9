import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { makeStore, uniqueProject } from '../support/firestore'
import { expireBehindBack, readLeaseDoc, sleep } from '../support/lease-helpers'
import { collect, processAlive, runCli, startCli, waitFor } from '../support/procs'

const project = uniqueProject('cli-run')
const store = makeStore(project)
const dir = mkdtempSync(join(tmpdir(), 'lf-cli-run-'))
afterAll(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('leasefence run', () => {
  test('concurrent runs with --on-busy wait never overlap', async () => {
    const res = 'cli/serial'
    const log = join(dir, 'serial.log')
    // Each run appends "start PID", sleeps, appends "end PID"; an overlap would interleave the lines.
    const script = `echo "start $$" >> "${log}"; sleep 1; echo "end $$" >> "${log}"`
    const runs = Array.from({ length: 3 }, () =>
      collect(startCli(['run', '--project', project, '--resource', res, '--on-busy', 'wait', '--wait-timeout', '60s', '--ttl', '10s', '--', 'sh', '-c', script]), 90_000)
    )
    const results = await Promise.all(runs)
    for (const r of results) expect(r.code, r.stderr).toBe(0)

    const lines = readFileSync(log, 'utf8').trim().split('\n')
    expect(lines).toHaveLength(6)
    const pids = new Set<string>()
    for (let i = 0; i < lines.length; i += 2) {
      const start = /^start (\d+)$/.exec(lines[i])
      const end = /^end (\d+)$/.exec(lines[i + 1])
      expect(start, lines.join('\n')).toBeTruthy()
      expect(end, lines.join('\n')).toBeTruthy()
      expect(end![1]).toBe(start![1])
      pids.add(start![1])
    }
    expect(pids.size).toBe(3)
    // Three holders, one after another: tokens 1..3, the last one released.
    expect(await store.status(res)).toMatchObject({ token: 3, live: false })
  })

  test('exits 75 and kills the command when its lease is taken over mid-run', async () => {
    const res = 'cli/takeover'
    const pidFile = join(dir, 'takeover.pid')
    const ticks = join(dir, 'takeover.ticks')
    // The command records its pid, then appends a tick every 100ms for far longer than the test.
    const cmd = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => require('fs').appendFileSync(${JSON.stringify(ticks)}, '.'), 100); setTimeout(() => {}, 120000)`
    const child = startCli([
      'run', '--project', project, '--resource', res, '--ttl', '6s', '--kill-grace', '2s', '--owner', 'runner-1',
      '--', process.execPath, '-e', cmd
    ])
    const done = collect(child, 60_000)
    const pid = Number(await waitFor('the command to start', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8'), 30_000))
    await waitFor('the first ticks', () => existsSync(ticks) && statSync(ticks).size > 2, 10_000)
    expect(processAlive(pid)).toBe(true)
    const held = await readLeaseDoc(store, res)
    expect(held.data).toMatchObject({ owner: 'runner-1', fencing: 1 })

    // Behind its back: the lease expires and another owner takes it.
    await expireBehindBack(store, res)
    const other = await store.acquire(res, 'intruder', { ttlMs: 60_000 })
    expect(other.acquired).toBe(true)
    const takenAt = performance.now()

    const r = await done
    expect(r.code, r.stderr).toBe(75)
    // Within a renewal period plus the kill grace, with room for a slow machine.
    expect(performance.now() - takenAt).toBeLessThan(2000 + 2000 + 5000)
    expect(r.stderr).toContain('leasefence: lease lost (taken over by intruder with token 2); stopping the command')
    expect(processAlive(pid)).toBe(false)
    const size = statSync(ticks).size
    await sleep(400)
    expect(statSync(ticks).size).toBe(size) // nothing is ticking any more
    // The intruder's lease is untouched by the loser's release.
    expect((await readLeaseDoc(store, res)).data).toMatchObject({ owner: 'intruder', fencing: 2, releasedAt: null })
  })

  test("returns the command's exit code and releases the lease", async () => {
    const res = 'cli/exit-code'
    const r = await runCli(['run', '--project', project, '--resource', res, '--', 'sh', '-c', 'test "$LEASEFENCE_FENCING_TOKEN" = 1 && test "$LEASEFENCE_RESOURCE" = cli/exit-code && exit 7'])
    expect(r.code, r.stderr).toBe(7)
    const doc = await readLeaseDoc(store, res)
    expect(doc.data).toMatchObject({ fencing: 1 })
    expect(doc.data!.releasedAt).toBeTruthy()
  })

  test('skip exits 0 with a one-line notice naming the holder, without running the command', async () => {
    const res = 'cli/skip'
    const marker = join(dir, 'skip.ran')
    await store.acquire(res, 'alice-holder', { ttlMs: 60_000 })
    const r = await runCli(['run', '--project', project, '--resource', res, '--on-busy', 'skip', '--', 'touch', marker])
    expect(r.code, r.stderr).toBe(0)
    expect(existsSync(marker)).toBe(false)
    expect(r.stdout).toBe('')
    const notices = r.stderr.split('\n').filter((l) => l.startsWith('leasefence: '))
    expect(notices).toHaveLength(1)
    expect(notices[0]).toMatch(/^leasefence: skipped: "cli\/skip" is held by alice-holder with token 1, expiring in \d/)
    expect((await readLeaseDoc(store, res)).data).toMatchObject({ owner: 'alice-holder', fencing: 1 })
  })

  test('fail exits 1 naming the holder, without running the command', async () => {
    const res = 'cli/fail'
    const marker = join(dir, 'fail.ran')
    await store.acquire(res, 'alice-holder', { ttlMs: 60_000 })
    const before = await readLeaseDoc(store, res)
    const r = await runCli(['run', '--project', project, '--resource', res, '--on-busy', 'fail', '--', 'touch', marker])
    expect(r.code).toBe(1)
    expect(existsSync(marker)).toBe(false)
    expect(r.stderr).toContain('"cli/fail" is held by alice-holder with token 1')
    expect(r.stderr).toContain('on-busy is fail')
    const after = await readLeaseDoc(store, res)
    expect(after.updateTime!.isEqual(before.updateTime!)).toBe(true)
  })

  test('wait gives up with exit 1 after --wait-timeout', async () => {
    const res = 'cli/wait-timeout'
    const marker = join(dir, 'wait.ran')
    await store.acquire(res, 'alice-holder', { ttlMs: 60_000 })
    const r = await runCli(['run', '--project', project, '--resource', res, '--on-busy', 'wait', '--wait-timeout', '2s', '--', 'touch', marker])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/waited \d+(\.\d)?s for "cli\/wait-timeout" is held by alice-holder/)
    expect(existsSync(marker)).toBe(false)
    expect(r.ms).toBeGreaterThanOrEqual(2000)
  })
})
