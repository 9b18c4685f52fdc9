import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { summarize, type Summary } from './stats'

/**
 * Cold start of the committed bundle, each a fresh `node` process started with this Node (process.execPath):
 *   node -e 0                     the floor: Node itself
 *   cli --version                 loading the bundle (dist/index.js) and nothing else
 *   main step                     `node dist/main.js` with INPUT_* and the GITHUB_* files, against the
 *                                 emulator: process start → outputs written and the process gone (the
 *                                 runner reads GITHUB_OUTPUT when the step ends); its post step
 *                                 (dist/post.js) then stops the heartbeat and releases, timed separately
 *   cli run -- true               `node dist/cli.js run --resource R -- true`: acquire, run, release
 */
export interface ColdStart {
  name: string
  summary: Summary
  note?: string
}

function timeProcess(args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; code: number | null; out: string }> {
  return new Promise((resolve) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    child.on('close', (code) => resolve({ ms: performance.now() - t0, code, out }))
  })
}

/** Parses a GITHUB_STATE / GITHUB_OUTPUT file (`name=value` lines and `name<<DELIM` blocks). */
export function parseCommandFile(file: string): Record<string, string> {
  const out: Record<string, string> = {}
  if (!existsSync(file)) return out
  const lines = readFileSync(file, 'utf8').split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line)
    if (heredoc) {
      const value: string[] = []
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) value.push(lines[i])
      out[heredoc[1]] = value.join('\n')
    } else if (line.includes('=')) {
      out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1)
    }
  }
  return out
}

export async function coldStarts(opts: { dist: string; emulatorHost: string; projectId: string; trials: number }): Promise<ColdStart[]> {
  const base: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(LEASEFENCE_|GOOGLE_|GCLOUD_|GCP_|INPUT_|GITHUB_|STATE_|RUNNER_|NODE_OPTIONS$)/.test(k)) continue
    base[k] = v
  }
  const env = { ...base, FIRESTORE_EMULATOR_HOST: opts.emulatorHost, METADATA_SERVER_DETECTION: 'none', LEASEFENCE_PROJECT: opts.projectId, GOOGLE_CLOUD_PROJECT: opts.projectId }
  const cli = join(opts.dist, 'cli.js')
  const results: ColdStart[] = []
  const series = async (name: string, once: (i: number) => Promise<number | undefined>, note?: string) => {
    const xs: number[] = []
    await once(-1) // one untimed run: file cache warm, like a runner that has the action checked out
    for (let i = 0; i < opts.trials; i++) {
      const ms = await once(i)
      if (ms !== undefined) xs.push(ms)
    }
    results.push({ name, summary: summarize(xs), note })
  }

  await series('node -e 0', async () => (await timeProcess(['-e', '0'], env)).ms)
  await series('node dist/cli.js --version (bundle load only)', async () => (await timeProcess([cli, '--version'], env)).ms)

  // The action's main step, then its post step.
  const posts: number[] = []
  let mainBroken: string | undefined
  await series('node dist/main.js (main step: start → outputs written, exited)', async (i) => {
    const dir = mkdtempSync(join(tmpdir(), 'leasefence-cold-'))
    try {
      const files = { GITHUB_OUTPUT: join(dir, 'output'), GITHUB_STATE: join(dir, 'state'), GITHUB_ENV: join(dir, 'env'), GITHUB_PATH: join(dir, 'path'), GITHUB_STEP_SUMMARY: join(dir, 'summary') }
      for (const f of Object.values(files)) writeFileSync(f, '')
      const stepEnv = {
        ...env,
        ...files,
        RUNNER_TEMP: dir,
        GITHUB_REPOSITORY: 'bench/leasefence',
        GITHUB_RUN_ID: String(1000 + i),
        GITHUB_RUN_ATTEMPT: '1',
        GITHUB_JOB: 'cold',
        GITHUB_WORKFLOW: 'bench',
        GITHUB_ACTOR: 'bench',
        GITHUB_SERVER_URL: 'https://github.com',
        'INPUT_RESOURCE': `bench/cold/${Date.now()}/${i}`,
        'INPUT_TTL': '60s',
        'INPUT_HEARTBEAT': '',
        'INPUT_ON-BUSY': 'skip',
        'INPUT_WAIT-TIMEOUT': '15m',
        'INPUT_OWNER': '',
        'INPUT_MAX-HOLD': '6h',
        'INPUT_PROJECT-ID': opts.projectId,
        'INPUT_DATABASE': '(default)',
        'INPUT_COLLECTION': 'leases',
        'INPUT_GATE-COLLECTION': 'publish_gate',
        'INPUT_CREDENTIALS-JSON': ''
      }
      const r = await timeProcess([join(opts.dist, 'main.js')], stepEnv)
      const outputs = parseCommandFile(files.GITHUB_OUTPUT)
      const state = parseCommandFile(files.GITHUB_STATE)
      const postEnv: NodeJS.ProcessEnv = { ...env, ...files, RUNNER_TEMP: dir }
      for (const [k, v] of Object.entries(state)) postEnv[`STATE_${k}`] = v
      const p = await timeProcess([join(opts.dist, 'post.js')], postEnv)
      if (outputs.acquired !== 'true' || r.code !== 0) {
        mainBroken = `main exited ${r.code}, acquired=${outputs.acquired}: ${r.out.split('\n').slice(-3).join(' | ')}`
        return undefined
      }
      if (i >= 0) posts.push(p.ms)
      return r.ms
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
  if (mainBroken) results[results.length - 1].note = `not functional: ${mainBroken}`
  if (posts.length) results.push({ name: 'node dist/post.js (post step: stop heartbeat, release)', summary: summarize(posts) })

  await series('node dist/cli.js run --resource R -- true', async (i) => {
    const r = await timeProcess([cli, 'run', '--resource', `bench/cold-cli/${Date.now()}/${i}`, '--ttl', '60s', '--', 'true'], env)
    return r.code === 0 ? r.ms : undefined
  })
  return results
}
