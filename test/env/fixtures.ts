import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { findListeners } from '../../src/env/process-ports'

/**
 * Fixtures of the environment-lease tests: real git repositories (a local bare "origin" so that
 * origin/main exists), port bands nobody else uses, and stray servers left listening on a slot's port.
 */

const GIT_ID = ['-c', 'user.name=leasefence test', '-c', 'user.email=test@leasefence.invalid', '-c', 'init.defaultBranch=main']

export function gitSync(cwd: string, args: string[]): string {
  return execFileSync('git', [...GIT_ID, ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
}

/** A bare origin with one commit on main, in `dir`/origin.git. Returns its path and the commit. */
export function makeOrigin(dir: string): { origin: string; commit: string } {
  const seed = join(dir, 'seed')
  mkdirSync(seed, { recursive: true })
  gitSync(seed, ['init', '-q', '-b', 'main'])
  execFileSync('sh', ['-c', 'echo "# app" > README.md && mkdir -p src && echo "export {}" > src/app.ts'], { cwd: seed })
  gitSync(seed, ['add', '.'])
  gitSync(seed, ['commit', '-q', '-m', 'initial'])
  const origin = join(dir, 'origin.git')
  gitSync(dir, ['clone', '-q', '--bare', seed, origin])
  return { origin, commit: gitSync(seed, ['rev-parse', 'HEAD']) }
}

/** A clone of origin at `dir`/repo (its worktrees go next to it: `dir`/wt-agent-<i>). */
export function cloneRepo(origin: string, dir: string): string {
  mkdirSync(dir, { recursive: true })
  const repo = join(dir, 'repo')
  if (!existsSync(repo)) gitSync(dir, ['clone', '-q', origin, repo])
  return repo
}

export function worktreePaths(repo: string): string[] {
  return gitSync(repo, ['worktree', 'list', '--porcelain'])
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length))
}

/**
 * A block of `size` ports below the ephemeral range (so no test server or emulator picked by port 0 can
 * be in it) on which nothing listens now. Random per test file: files run in parallel.
 */
export function quietPortBlock(size: number): number {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * ((32_000 - 20_000 - size) / 100)) * 100
    const ports = Array.from({ length: size }, (_, i) => base + i)
    if (findListeners(ports).listeners.length === 0) return base
  }
  throw new Error('no quiet block of ports found')
}

export interface StrayServer {
  child: ChildProcess
  pid: number
  port: number
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const strays: ChildProcess[] = []

/**
 * A separate node process serving HTTP 200 on 127.0.0.1:`port` (what a dev server left behind by a
 * crashed agent looks like). `ignoreTerm`: it ignores SIGTERM, so only SIGKILL stops it.
 */
export async function startStrayServer(port: number, opts: { ignoreTerm?: boolean; status?: number } = {}): Promise<StrayServer> {
  const code = [
    "const http = require('node:http')",
    opts.ignoreTerm ? "process.on('SIGTERM', () => console.log('ignoring SIGTERM'))" : '',
    `http.createServer((q, s) => { s.writeHead(${opts.status ?? 200}); s.end('ok') }).listen(${port}, '127.0.0.1', () => console.log('listening'))`
  ].join(';\n')
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'pipe'] })
  strays.push(child)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (c, s) => resolve({ code: c, signal: s }))
  )
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  await new Promise<void>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! })
    const timer = setTimeout(() => reject(new Error(`stray server on ${port} did not start: ${stderr}`)), 10_000)
    rl.on('line', (line) => {
      if (line === 'listening') {
        clearTimeout(timer)
        resolve()
      }
    })
    child.on('exit', () => {
      clearTimeout(timer)
      reject(new Error(`stray server on ${port} exited: ${stderr}`))
    })
  })
  return { child, pid: child.pid!, port, exited }
}

/** Kills every stray server a test left running. */
export function killStrays(): void {
  for (const c of strays.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  }
}
