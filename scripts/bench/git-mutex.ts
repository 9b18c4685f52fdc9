import { execFile } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { jitter, sleep } from './stats'

/**
 * The baseline: a git-branch mutex of the kind popular GitHub Actions use. The lock is a branch in a
 * (here local, bare) repository: taking it is `git push origin <sha>:refs/heads/<lock>`, which the remote
 * refuses while the branch exists with another commit (each contender pushes a commit of its own, a
 * sibling of the others, so the push is never a fast-forward); releasing it is deleting the branch. A
 * waiter retries every ~1 s (±30% jitter, as our poller). There is no fencing token and no expiry.
 */
const run = promisify(execFile)
const ID = ['-c', 'user.name=bench', '-c', 'user.email=bench@leasefence.invalid', '-c', 'commit.gpgsign=false']

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd })
  return stdout.trim()
}

export async function createLockRepo(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true })
  const bare = join(dir, 'locks.git')
  const seed = join(dir, 'seed')
  await git(dir, 'init', '-q', '--bare', '-b', 'main', bare)
  await git(dir, 'init', '-q', '-b', 'main', seed)
  writeFileSync(join(seed, 'README'), 'locks\n')
  await git(seed, 'add', 'README')
  await git(seed, ...ID, 'commit', '-q', '-m', 'root')
  await git(seed, 'push', '-q', bare, 'main')
  return bare
}

export class GitMutex {
  private sha = ''

  private constructor(
    private readonly clone: string,
    readonly name: string
  ) {}

  /** A contender: its own clone and a commit of its own to push as the lock. */
  static async contender(bare: string, dir: string, name: string): Promise<GitMutex> {
    const clone = join(dir, `c-${name}`)
    await git(dir, 'clone', '-q', bare, clone)
    await git(clone, ...ID, 'commit', '-q', '--allow-empty', '-m', `lock held by ${name}`)
    const m = new GitMutex(clone, name)
    m.sha = await git(clone, 'rev-parse', 'HEAD')
    return m
  }

  async tryLock(lock: string): Promise<boolean> {
    try {
      await git(this.clone, 'push', '-q', 'origin', `${this.sha}:refs/heads/${lock}`)
      return true
    } catch {
      return false
    }
  }

  async lock(lock: string, retryMs = 1000, signal?: AbortSignal): Promise<void> {
    while (!(await this.tryLock(lock))) {
      if (signal?.aborted) throw new Error('aborted')
      await sleep(jitter(retryMs))
    }
  }

  async unlock(lock: string): Promise<void> {
    await git(this.clone, 'push', '-q', 'origin', '--delete', lock)
  }
}
