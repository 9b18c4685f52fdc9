import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Local git fixtures: a bare "remote" and clones of it, with an identity and config of their own, so
 * that the tests work on a machine without any git setup (no user.name, no global config).
 */
export const GIT_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0'
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    env: { ...process.env, ...GIT_ENV },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe']
  }).trim()
}

export interface GitFixture {
  dir: string
  remote: string
  /** Clones the remote into `<dir>/<name>`. */
  clone(name: string): string
  /** Writes a file, commits it, returns the new HEAD. */
  commit(clone: string, file: string, content: string): string
  /** Every ref of the remote with its object id ("<sha> <ref>" lines), to compare before and after. */
  remoteRefs(): string
}

export function gitFixture(): GitFixture {
  const dir = mkdtempSync(join(tmpdir(), 'lf-git-'))
  const remote = join(dir, 'remote.git')
  git(dir, 'init', '--bare', '--initial-branch=main', remote)
  const seed = join(dir, 'seed')
  git(dir, 'clone', '-q', remote, seed)
  writeFileSync(join(seed, 'README'), 'seed\n')
  git(seed, 'add', 'README')
  git(seed, 'commit', '-q', '-m', 'seed')
  git(seed, 'push', '-q', 'origin', 'HEAD:main')
  return {
    dir,
    remote,
    clone(name) {
      const p = join(dir, name)
      git(dir, 'clone', '-q', remote, p)
      return p
    },
    commit(clone, file, content) {
      writeFileSync(join(clone, file), content)
      git(clone, 'add', file)
      git(clone, 'commit', '-q', '-m', `${file}: ${content.trim()}`)
      return git(clone, 'rev-parse', 'HEAD')
    },
    remoteRefs() {
      return git(remote, 'for-each-ref', '--format=%(objectname) %(refname)')
    }
  }
}
