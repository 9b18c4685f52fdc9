import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { ensureWorktree, removeWorktree, worktreeLayout } from '../../src/env/worktree'
import { cloneRepo, makeOrigin, worktreePaths } from './fixtures'

const tmp = mkdtempSync(join(tmpdir(), 'leasefence-wtlock-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

test('many agents adding and removing worktrees of one repository at once never corrupt .git/worktrees', async () => {
  const { origin } = makeOrigin(tmp)
  const repo = cloneRepo(origin, tmp)
  // Unserialised, concurrent `worktree add` and `worktree prune` failed here with
  // "failed to read .git/worktrees/wt-agent-0/commondir".
  for (let round = 0; round < 3; round++) {
    const made = await Promise.all(Array.from({ length: 6 }, (_, i) => ensureWorktree(worktreeLayout(repo, i), 'origin/main')))
    expect(made.map((m) => m.branch)).toEqual(Array.from({ length: 6 }, (_, i) => `agent/${i}`))
    expect(worktreePaths(repo)).toHaveLength(7)
    await Promise.all(Array.from({ length: 6 }, (_, i) => removeWorktree(worktreeLayout(repo, i))))
    expect(worktreePaths(repo)).toEqual([repo])
  }
  // A lock left by a process that died is broken, not waited on for minutes.
  const dead = spawn('true')
  await new Promise((r) => dead.on('exit', r))
  const { writeFileSync } = await import('node:fs')
  writeFileSync(join(repo, '.git', 'leasefence-worktree.lock'), `${dead.pid}\n`)
  const started = Date.now()
  await ensureWorktree(worktreeLayout(repo, 0), 'origin/main')
  expect(Date.now() - started).toBeLessThan(10_000)
})
