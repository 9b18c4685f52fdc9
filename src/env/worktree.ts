import { execFile } from 'node:child_process'
import { existsSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { LeasefenceError, ValidationError } from '../core/errors'

/**
 * Per-slot git worktrees: slot i gets branch `agent/<i>` checked out at `../wt-agent-<i>` next to the
 * repository (`git worktree add -B agent/<i> ../wt-agent-<i> <base-ref>`).
 */

export class WorktreeError extends LeasefenceError {
  constructor(message: string) {
    super('worktree_failed', message)
  }
}

export interface GitResult {
  code: number
  stdout: string
  stderr: string
}

export function git(cwd: string, args: string[], timeoutMs = 120_000): Promise<GitResult> {
  return new Promise((resolvePromise) => {
    execFile(
      'git',
      args,
      { cwd, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' } },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0
        resolvePromise({ code, stdout: String(stdout), stderr: String(stderr || (err && !stderr ? err.message : '')) })
      }
    )
  })
}

async function gitOk(cwd: string, args: string[]): Promise<string> {
  const r = await git(cwd, args)
  if (r.code !== 0) throw new WorktreeError(`git ${args.join(' ')} failed (in ${cwd}): ${r.stderr.trim() || `exit ${r.code}`}`)
  return r.stdout
}

export interface WorktreeLayout {
  /** The repository's top level directory. */
  repo: string
  /** The slot's worktree directory. */
  path: string
  branch: string
}

const REF_RE = /^(?!-)[A-Za-z0-9._/@^~{}-]+$/

export function validateBaseRef(ref: string): string {
  if (!ref || !REF_RE.test(ref) || ref.includes('..')) {
    throw new ValidationError(`base-ref: "${ref}" is not a usable git ref (e.g. origin/main)`)
  }
  return ref
}

/** The repository top level for `dir` (the repository at cwd, or --repo). */
export async function repoTopLevel(dir: string): Promise<string> {
  const abs = resolve(dir)
  if (!existsSync(abs)) throw new ValidationError(`repo: ${abs} does not exist`)
  const r = await git(abs, ['rev-parse', '--show-toplevel'])
  if (r.code !== 0) throw new ValidationError(`repo: ${abs} is not inside a git repository (${r.stderr.trim()})`)
  return r.stdout.trim()
}

/** Where slot `slot`'s worktree goes: ../wt-agent-<slot> relative to the repository's top level. */
export function worktreeLayout(repoTop: string, slot: number): WorktreeLayout {
  return { repo: repoTop, path: join(dirname(repoTop), `wt-agent-${slot}`), branch: `agent/${slot}` }
}

interface WorktreeEntry {
  path: string
  branch?: string
  prunable: boolean
  locked: boolean
}

export async function listWorktrees(repo: string): Promise<WorktreeEntry[]> {
  const out = await gitOk(repo, ['worktree', 'list', '--porcelain'])
  const entries: WorktreeEntry[] = []
  let cur: WorktreeEntry | undefined
  for (const line of out.split('\n')) {
    if (line.startsWith('worktree ')) {
      cur = { path: line.slice('worktree '.length), prunable: false, locked: false }
      entries.push(cur)
    } else if (cur && line.startsWith('branch ')) cur.branch = line.slice('branch '.length)
    else if (cur && line.startsWith('prunable')) cur.prunable = true
    else if (cur && line.startsWith('locked')) cur.locked = true
  }
  return entries
}

function samePath(a: string, b: string): boolean {
  const norm = (p: string) => {
    try {
      return realpathSync(p)
    } catch {
      return resolve(p)
    }
  }
  return norm(a) === norm(b)
}

/**
 * True when `dir` is a worktree directory of `repo` whose registration is gone (its `.git` file points
 * into this repository's worktrees/ admin area): a leftover we may delete. A directory that is anything
 * else is never deleted.
 */
async function isOrphanWorktreeOf(repo: string, dir: string): Promise<boolean> {
  const dotGit = join(dir, '.git')
  try {
    if (!statSync(dotGit).isFile()) return false
    const m = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'))
    if (!m) return false
    const common = (await gitOk(repo, ['rev-parse', '--git-common-dir'])).trim()
    const commonAbs = isAbsolute(common) ? common : resolve(repo, common)
    const target = resolve(dir, m[1].trim())
    return samePath(dirname(target), join(commonAbs, 'worktrees'))
  } catch {
    return false
  }
}

export interface WorktreeResult {
  path: string
  branch: string
  repo: string
  /** created: added now; kept: already there and reused; recreated: a leftover replaced by a fresh one. */
  action: 'created' | 'kept' | 'recreated'
  head: string
}

/**
 * Makes slot's worktree. `reuse`: an existing registered worktree of the slot's branch is kept as it is
 * (the same holder acquiring again); otherwise a leftover is removed and the worktree made afresh from
 * base-ref. A directory in the way that is not a worktree of this repository is refused, never deleted.
 */
export async function ensureWorktree(layout: WorktreeLayout, baseRef: string, opts: { reuse?: boolean } = {}): Promise<WorktreeResult> {
  validateBaseRef(baseRef)
  return withRepoLock(layout.repo, () => ensureWorktreeLocked(layout, baseRef, opts))
}

async function ensureWorktreeLocked(layout: WorktreeLayout, baseRef: string, opts: { reuse?: boolean }): Promise<WorktreeResult> {
  const { repo, path, branch } = layout
  await git(repo, ['worktree', 'prune'])
  const existing = (await listWorktrees(repo)).find((w) => samePath(w.path, path))
  let action: WorktreeResult['action'] = 'created'
  if (existing && opts.reuse && existing.branch === `refs/heads/${branch}` && existsSync(path)) {
    const head = (await gitOk(path, ['rev-parse', 'HEAD'])).trim()
    return { path, branch, repo, action: 'kept', head }
  }
  if (existing) {
    await gitOk(repo, ['worktree', 'remove', '--force', path])
    action = 'recreated'
  } else if (existsSync(path)) {
    if (!(await isOrphanWorktreeOf(repo, path))) {
      throw new WorktreeError(`${path} exists and is not a worktree of ${repo}; move it away (leasefence does not delete it)`)
    }
    rmSync(path, { recursive: true, force: true })
    action = 'recreated'
  }
  await git(repo, ['worktree', 'prune'])
  const resolved = await git(repo, ['rev-parse', '--verify', '--quiet', `${baseRef}^{commit}`])
  if (resolved.code !== 0) {
    throw new WorktreeError(`base-ref "${baseRef}" is not a commit in ${repo} (fetch it first, e.g. git fetch origin)`)
  }
  await gitOk(repo, ['worktree', 'add', '--quiet', '-B', branch, path, baseRef])
  const head = (await gitOk(path, ['rev-parse', 'HEAD'])).trim()
  return { path, branch, repo, action, head }
}

export interface WorktreeRemoval {
  path: string
  /** removed: it was there and is gone now; absent: nothing was there. */
  action: 'removed' | 'absent'
}

/**
 * `git worktree remove --force` and `git worktree prune`. A worktree already gone is fine. The branch
 * `agent/<slot>` is kept: commits made on it survive (the next acquire resets it with -B).
 */
export async function removeWorktree(layout: WorktreeLayout): Promise<WorktreeRemoval> {
  if (!existsSync(layout.repo)) return { path: layout.path, action: 'absent' }
  return withRepoLock(layout.repo, () => removeWorktreeLocked(layout))
}

async function removeWorktreeLocked(layout: WorktreeLayout): Promise<WorktreeRemoval> {
  const { repo, path } = layout
  const existing = (await listWorktrees(repo)).find((w) => samePath(w.path, path))
  let action: WorktreeRemoval['action'] = 'absent'
  if (existing) {
    if (existsSync(path)) {
      const r = await git(repo, ['worktree', 'remove', '--force', path])
      if (r.code !== 0 && existsSync(path)) {
        throw new WorktreeError(`git worktree remove --force ${path} failed: ${r.stderr.trim()}`)
      }
    }
    action = 'removed'
  } else if (existsSync(path) && (await isOrphanWorktreeOf(repo, path))) {
    rmSync(path, { recursive: true, force: true })
    action = 'removed'
  }
  await gitOk(repo, ['worktree', 'prune'])
  return { path, action }
}

/**
 * Serialises worktree changes in one repository across processes. Concurrent `git worktree add` and
 * `git worktree prune` race in .git/worktrees (a prune can delete an entry another add is still
 * writing: "failed to read .git/worktrees/…/commondir"), so parallel agents sharing a repository take
 * turns. The lock is a file created exclusively in the git common dir; one left by a dead process (or
 * older than two minutes) is broken.
 */
export async function withRepoLock<T>(repo: string, fn: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  const common = (await gitOk(repo, ['rev-parse', '--git-common-dir'])).trim()
  const lock = join(isAbsolute(common) ? common : resolve(repo, common), 'leasefence-worktree.lock')
  const started = Date.now()
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' })
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      if (lockIsStale(lock)) {
        rmSync(lock, { force: true })
        continue
      }
      if (Date.now() - started > timeoutMs) {
        throw new WorktreeError(`another process holds ${lock} for over ${Math.round(timeoutMs / 1000)}s; remove it if no leasefence is running`)
      }
      await new Promise((r) => setTimeout(r, Math.min(500, 20 * 2 ** Math.min(attempt, 5)) * (0.5 + Math.random())))
    }
  }
  try {
    return await fn()
  } finally {
    rmSync(lock, { force: true })
  }
}

function lockIsStale(lock: string): boolean {
  try {
    const age = Date.now() - statSync(lock).mtimeMs
    const pid = Number(readFileSync(lock, 'utf8').trim())
    if (age > 120_000) return true
    if (Number.isInteger(pid) && pid > 0) {
      try {
        process.kill(pid, 0)
        return false
      } catch (e) {
        return (e as NodeJS.ErrnoException).code === 'ESRCH'
      }
    }
    return age > 5000
  } catch {
    return false
  }
}
