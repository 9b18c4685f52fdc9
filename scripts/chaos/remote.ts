import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { RemoteCommit } from './history'

/**
 * The published resource of the chaos workload: a local bare git repository holding counter.txt on
 * main, and one working clone per worker.
 *
 * Pushes run `git-receive-pack` through `setsid`, in a session of its own: the "server" side of a push
 * is not in the worker's process group, so pausing or killing a worker never freezes or kills the
 * remote mid-update (as with a real remote on another machine). A killed client leaves at most an
 * unfinished push, which the remote discards.
 */
const run = promisify(execFile)

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd, maxBuffer: 64 * 1024 * 1024 })
  return stdout.trim()
}

const IDENTITY = ['-c', 'user.name=chaos', '-c', 'user.email=chaos@leasefence.invalid', '-c', 'commit.gpgsign=false']

export async function createRemote(dir: string): Promise<string> {
  const bare = join(dir, 'remote.git')
  const seed = join(dir, 'seed')
  mkdirSync(dir, { recursive: true })
  await git(dir, 'init', '-q', '--bare', '-b', 'main', bare)
  await git(bare, 'config', 'gc.auto', '0')
  await git(bare, 'config', 'receive.denyNonFastForwards', 'false')
  await git(dir, 'init', '-q', '-b', 'main', seed)
  writeFileSync(join(seed, 'counter.txt'), '0\n')
  await git(seed, 'add', 'counter.txt')
  await git(seed, ...IDENTITY, 'commit', '-q', '-m', 'counter 0')
  await git(seed, 'push', '-q', bare, 'main')
  rmSync(seed, { recursive: true, force: true })
  return bare
}

/** util-linux `setsid`, when the machine has it (without it the remote side shares the worker's fate). */
function hasSetsid(): boolean {
  return (process.env.PATH ?? '').split(':').some((d) => d && existsSync(join(d, 'setsid')))
}

export async function cloneFor(bare: string, dir: string): Promise<void> {
  await git('/', 'clone', '-q', bare, dir)
  const settings = [
    ['user.name', 'chaos'],
    ['user.email', 'chaos@leasefence.invalid'],
    ['commit.gpgsign', 'false'],
    ['gc.auto', '0']
  ]
  if (hasSetsid()) settings.push(['remote.origin.receivepack', 'setsid -w git-receive-pack'])
  for (const [k, v] of settings) {
    await git(dir, 'config', k, v)
  }
}

/** Removes lock files a killed git left in a worker's own clone (index.lock, ref locks). */
export function clearStaleLocks(clone: string): number {
  let n = 0
  const walk = (d: string) => {
    let entries: string[]
    try {
      entries = readdirSync(d)
    } catch {
      return
    }
    for (const e of entries) {
      const p = join(d, e)
      if (e === 'objects') continue
      let st
      try {
        st = statSync(p)
      } catch {
        continue
      }
      if (st.isDirectory()) walk(p)
      else if (e.endsWith('.lock')) {
        rmSync(p, { force: true })
        n++
      }
    }
  }
  walk(join(clone, '.git'))
  return n
}

const SEP = '\x1f'
const END = '\x1e'

/** main's first-parent chain (oldest first) with the trailers, and every commit reachable from main. */
export async function readRemote(bare: string): Promise<{ mainline: RemoteCommit[]; reachable: string[] }> {
  const format = [
    '%H',
    '%(trailers:key=Lease-Fencing-Token,valueonly,separator=%x2C)',
    '%(trailers:key=Lease-Owner,valueonly,separator=%x2C)',
    '%(trailers:key=Chaos-Run,valueonly,separator=%x2C)',
    '%(trailers:key=Chaos-Counter,valueonly,separator=%x2C)'
  ].join('%x1f') + '%x1e'
  const out = await git(bare, 'log', '--first-parent', '--reverse', `--format=${format}`, 'main')
  const mainline: RemoteCommit[] = []
  for (const rec of out.split(END)) {
    const [sha, token, owner, runId, counter] = rec.trim().split(SEP).map((s) => (s ?? '').trim())
    if (!sha) continue
    mainline.push({
      sha,
      token: token ? Number(token) : undefined,
      owner: owner || undefined,
      run: runId || undefined,
      counter: counter ? Number(counter) : undefined
    })
  }
  // The root commit (counter 0) carries no trailers.
  if (mainline[0] && mainline[0].counter === undefined) mainline[0].counter = 0
  const reachable = (await git(bare, 'rev-list', 'main')).split('\n').filter(Boolean)
  return { mainline, reachable }
}
