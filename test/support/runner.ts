/**
 * A faithful-enough simulation of the GitHub Actions runner (runner 2.33x) for a JavaScript action:
 * every step a separate process, fresh file-command files per step, INPUT_* with the action.yml
 * defaults, STATE_* for post, GITHUB_ENV / GITHUB_PATH carried to later steps, user steps run by bash,
 * and the job-end backstop that kills what carries the job's RUNNER_TRACKING_ID.
 *
 * It executes the committed bundle named in action.yml (runs.main / runs.post), so what it tests is
 * what a workflow would run. Used by test/action/* and scripts/demo.ts (no vitest imports here).
 */
import { execFileSync, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'

export const REPO_ROOT = resolve(__dirname, '../..')

/** The PATH of a fresh runner machine: the job's `node` is whatever the machine has, not the action's. */
export const MACHINE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

export interface ActionDefinition {
  dir: string
  inputs: Record<string, { description?: string; required?: boolean; default?: string }>
  outputs: Record<string, { description?: string }>
  runs: { using: string; main: string; post?: string; 'post-if'?: string }
}

export function loadAction(dir: string): ActionDefinition {
  const file = ['action.yml', 'action.yaml'].map((f) => join(dir, f)).find((f) => existsSync(f))
  if (!file) throw new Error(`no action.yml in ${dir}`)
  const doc = parseYaml(readFileSync(file, 'utf8')) as Partial<ActionDefinition>
  if (!doc.runs?.using || !doc.runs.main) throw new Error(`${file}: runs.using and runs.main are required`)
  return { dir, inputs: doc.inputs ?? {}, outputs: doc.outputs ?? {}, runs: doc.runs as ActionDefinition['runs'] }
}

export interface Annotation {
  level: 'notice' | 'warning' | 'error' | 'debug'
  message: string
  properties: Record<string, string>
}

export interface StepResult {
  name: string
  kind: 'main' | 'post' | 'uses' | 'shell'
  exitCode: number
  signal?: string
  stdout: string
  stderr: string
  /** stdout lines without workflow commands, stderr appended: what the log viewer shows. */
  log: string
  outputs: Record<string, string>
  annotations: Annotation[]
  /** Values registered with ::add-mask::. */
  masks: string[]
  /** The step's GITHUB_STEP_SUMMARY contents. */
  summary: string
  state: Record<string, string>
  env: Record<string, string>
  paths: string[]
  durationMs: number
  /** A child kept the step's stdout/stderr open after the step process exited (the runner waits 5 s). */
  stdioHeld: boolean
}

export interface SimulatedJobOptions {
  /** Where action.yml lives (default: this repository). */
  actionRoot?: string
  repository?: string
  runId?: string
  runAttempt?: string
  job?: string
  workflow?: string
  actor?: string
  serverUrl?: string
  /** `${{ github.token }}` (default ''); give one only with `apiUrl` pointing at a local fake. */
  githubToken?: string
  /** GITHUB_API_URL (default: a closed loopback port, so nothing ever leaves the machine). */
  apiUrl?: string
  /** Job-level `env:` (e.g. GOOGLE_CLOUD_PROJECT as google-github-actions/auth exports it). */
  env?: Record<string, string>
  /** A label for live logs (the demo). */
  label?: string
  /** Called with every log line of every step as it arrives. */
  onLine?: (step: string, stream: 'stdout' | 'stderr', line: string) => void
  /** Kill a step after this long (default 120 s). */
  stepTimeoutMs?: number
  /** Keep RUNNER_TEMP / the workspace after end() (debugging). */
  keepFiles?: boolean
}

export interface StepControl {
  /** Kill the step after this long (default: the job's stepTimeoutMs, 120 s). */
  timeoutMs?: number
  /** Cancel the run this long after the step started (SIGINT, then SIGTERM, then SIGKILL). */
  cancelAfterMs?: number
}

interface MainRecord {
  action: ActionDefinition
  inputs: Record<string, string>
  state: Record<string, string>
  name: string
}

let runCounter = 0

export class SimulatedJob {
  readonly trackingId = `github_${randomUUID()}`
  readonly root: string
  readonly runnerTemp: string
  readonly workspace: string
  readonly home: string
  readonly context: Record<string, string>
  /** GITHUB_ENV additions so far (applied to every later step). */
  readonly exportedEnv: Record<string, string> = {}
  /** GITHUB_PATH additions so far, most recent first (as the runner prepends them). */
  readonly addedPaths: string[] = []
  readonly steps: StepResult[] = []
  private readonly mains: MainRecord[] = []
  private readonly opts: SimulatedJobOptions
  private stepNo = 0
  private ended = false

  constructor(opts: SimulatedJobOptions = {}) {
    this.opts = opts
    this.root = mkdtempSync(join(tmpdir(), 'leasefence-job-'))
    this.runnerTemp = join(this.root, '_temp')
    this.workspace = join(this.root, 'workspace')
    this.home = join(this.root, 'home')
    for (const d of [this.runnerTemp, this.workspace, this.home]) mkdirSync(d, { recursive: true })
    const runId = opts.runId ?? String(9_000_000 + process.pid * 100 + ++runCounter)
    this.context = {
      repository: opts.repository ?? 'octo-org/site',
      run_id: runId,
      run_attempt: opts.runAttempt ?? '1',
      job: opts.job ?? 'publish',
      workflow: opts.workflow ?? 'Scheduled publish',
      actor: opts.actor ?? 'octocat',
      server_url: opts.serverUrl ?? 'https://github.com',
      // ${{ github.token }}: empty unless a test brings a local GitHub API fake (no traffic leaves this machine).
      token: opts.githubToken ?? ''
    }
  }

  /** The environment every step starts from: the machine's, the runner's GITHUB_*, the job's env. */
  baseEnv(): Record<string, string> {
    const c = this.context
    const env: Record<string, string> = {
      HOME: this.home,
      LANG: 'C.UTF-8',
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_REPOSITORY: c.repository,
      GITHUB_REPOSITORY_OWNER: c.repository.split('/')[0],
      GITHUB_RUN_ID: c.run_id,
      GITHUB_RUN_ATTEMPT: c.run_attempt,
      GITHUB_RUN_NUMBER: '1',
      GITHUB_JOB: c.job,
      GITHUB_WORKFLOW: c.workflow,
      GITHUB_ACTOR: c.actor,
      GITHUB_SERVER_URL: c.server_url,
      GITHUB_API_URL: this.opts.apiUrl ?? 'http://127.0.0.1:9',
      GITHUB_WORKSPACE: this.workspace,
      GITHUB_EVENT_NAME: 'schedule',
      RUNNER_TEMP: this.runnerTemp,
      RUNNER_OS: 'Linux',
      RUNNER_NAME: `simulated-runner-${process.pid}`,
      RUNNER_TRACKING_ID: this.trackingId
    }
    if (process.env.FIRESTORE_EMULATOR_HOST) env.FIRESTORE_EMULATOR_HOST = process.env.FIRESTORE_EMULATOR_HOST
    Object.assign(env, this.opts.env ?? {}, this.exportedEnv)
    env.PATH = [...this.addedPaths, (this.opts.env?.PATH ?? MACHINE_PATH)].join(':')
    return env
  }

  /** Evaluates the `${{ github.x }}` expressions the defaults use. */
  private expand(text: string): string {
    return text.replace(/\$\{\{\s*github\.([a-z_]+)\s*\}\}/g, (_, key: string) => {
      if (!(key in this.context)) throw new Error(`simulated runner: unknown expression github.${key}`)
      return this.context[key]
    })
  }

  /** INPUT_* as the runner sets them: every declared input, the given value or the default ('' if none). */
  private inputEnv(action: ActionDefinition, given: Record<string, string>): Record<string, string> {
    const unknown = Object.keys(given).filter((k) => !(k in action.inputs))
    if (unknown.length) throw new Error(`simulated runner: unexpected input(s) ${unknown.join(', ')} for ${action.dir}`)
    const env: Record<string, string> = {}
    for (const [name, def] of Object.entries(action.inputs)) {
      // A required input left out only draws a warning from the runner: the action decides.
      const value = name in given ? given[name] : this.expand(String(def?.default ?? ''))
      env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value
    }
    return env
  }

  /** Runs the action's main step (`uses: ./`). */
  async main(inputs: Record<string, string> = {}, opts: { name?: string } & StepControl = {}): Promise<StepResult> {
    const action = loadAction(this.opts.actionRoot ?? REPO_ROOT)
    const r = await this.runNode(action, action.runs.main, 'main', opts.name ?? 'leasefence', inputs, {}, opts)
    this.mains.push({ action, inputs, state: r.state, name: r.name })
    return r
  }

  /** Runs the post step of the latest (or given) main, with its STATE_* values. */
  async post(which?: number): Promise<StepResult> {
    const rec = this.mains[which ?? this.mains.length - 1]
    if (!rec) throw new Error('simulated runner: post without a main step')
    if (!rec.action.runs.post) throw new Error('simulated runner: the action has no post')
    const stateEnv: Record<string, string> = {}
    for (const [k, v] of Object.entries(rec.state)) stateEnv[`STATE_${k}`] = v
    return this.runNode(rec.action, rec.action.runs.post, 'post', `Post ${rec.name}`, rec.inputs, stateEnv, {})
  }

  /** Runs a sub-action of this repository (`uses: ./publish`), or any action directory. */
  async uses(sub: string, inputs: Record<string, string> = {}, opts: { env?: Record<string, string> } & StepControl = {}): Promise<StepResult> {
    const dir = resolve(this.opts.actionRoot ?? REPO_ROOT, sub)
    const action = loadAction(dir)
    return this.runNode(action, action.runs.main, 'uses', sub, inputs, opts.env ?? {}, opts)
  }

  /** A `run:` step with `shell: bash` (bash --noprofile --norc -eo pipefail). */
  async shell(script: string, opts: { name?: string; env?: Record<string, string> } & StepControl = {}): Promise<StepResult> {
    const name = opts.name ?? `run: ${script.split('\n')[0].slice(0, 60)}`
    return this.runStep('shell', name, 'bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], opts.env ?? {}, opts)
  }

  private async runNode(
    action: ActionDefinition,
    entry: string,
    kind: 'main' | 'post' | 'uses',
    name: string,
    inputs: Record<string, string>,
    extraEnv: Record<string, string>,
    control: StepControl
  ): Promise<StepResult> {
    if (action.runs.using !== 'node24') throw new Error(`simulated runner: runs.using ${action.runs.using} is not supported (node24)`)
    const file = resolve(action.dir, entry)
    if (!existsSync(file)) throw new Error(`simulated runner: ${file} (from ${action.dir}/action.yml) does not exist`)
    // The runner's own node24 runs the action: here, the node running the tests (Node 24).
    return this.runStep(kind, name, process.execPath, [file], { ...extraEnv, ...this.inputEnv(action, inputs) }, control)
  }

  private async runStep(
    kind: StepResult['kind'],
    name: string,
    cmd: string,
    args: string[],
    extraEnv: Record<string, string>,
    control: StepControl = {}
  ): Promise<StepResult> {
    const timeoutMs = control.timeoutMs ?? this.opts.stepTimeoutMs ?? 120_000
    if (this.ended) throw new Error('simulated runner: the job has ended')
    const n = ++this.stepNo
    const dir = join(this.runnerTemp, '_runner_file_commands', `step-${n}`)
    mkdirSync(dir, { recursive: true })
    const files = {
      GITHUB_OUTPUT: join(dir, 'set_output'),
      GITHUB_ENV: join(dir, 'set_env'),
      GITHUB_PATH: join(dir, 'add_path'),
      GITHUB_STATE: join(dir, 'save_state'),
      GITHUB_STEP_SUMMARY: join(dir, 'step_summary')
    }
    for (const f of Object.values(files)) writeFileSync(f, '')
    const env = { ...this.baseEnv(), ...extraEnv, ...files }
    const started = Date.now()
    const child = spawn(cmd, args, { cwd: this.workspace, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const lines = { stdout: '', stderr: '' }
    const feed = (stream: 'stdout' | 'stderr', chunk: Buffer) => {
      const text = chunk.toString()
      if (stream === 'stdout') stdout += text
      else stderr += text
      if (!this.opts.onLine) return
      lines[stream] += text
      const parts = lines[stream].split('\n')
      lines[stream] = parts.pop() ?? ''
      for (const l of parts) this.opts.onLine(name, stream, l)
    }
    child.stdout.on('data', (c: Buffer) => feed('stdout', c))
    child.stderr.on('data', (c: Buffer) => feed('stderr', c))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    // Cancellation as the runner does it: SIGINT, SIGTERM 7.5 s later, SIGKILL 2.5 s after that.
    const cancelTimers: NodeJS.Timeout[] = []
    if (control.cancelAfterMs !== undefined) {
      cancelTimers.push(
        setTimeout(() => child.kill('SIGINT'), control.cancelAfterMs),
        setTimeout(() => child.kill('SIGTERM'), control.cancelAfterMs + 7500),
        setTimeout(() => child.kill('SIGKILL'), control.cancelAfterMs + 10_000)
      )
    }
    const streamsClosed = new Promise<boolean>((res) => child.on('close', () => res(true)))
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
      child.on('exit', (code, signal) => res({ code, signal }))
      child.on('error', () => res({ code: 127, signal: null }))
    })
    clearTimeout(timer)
    for (const t of cancelTimers) clearTimeout(t)
    // The runner waits for the step's output streams to close, at most 5 s after the process exited.
    let graceTimer: NodeJS.Timeout | undefined
    const closed = await Promise.race([
      streamsClosed,
      new Promise<boolean>((res) => (graceTimer = setTimeout(() => res(false), 5000)))
    ])
    clearTimeout(graceTimer)
    if (!closed) {
      child.stdout.destroy()
      child.stderr.destroy()
    }
    for (const s of ['stdout', 'stderr'] as const) if (lines[s] && this.opts.onLine) this.opts.onLine(name, s, lines[s])

    const outputs = parseFileCommand(readFileSync(files.GITHUB_OUTPUT, 'utf8'))
    const envAdds = parseFileCommand(readFileSync(files.GITHUB_ENV, 'utf8'))
    const state = parseFileCommand(readFileSync(files.GITHUB_STATE, 'utf8'))
    const paths = readFileSync(files.GITHUB_PATH, 'utf8').split(/\r?\n/).filter((l) => l.trim() !== '')
    Object.assign(this.exportedEnv, envAdds)
    for (const p of paths) {
      const i = this.addedPaths.indexOf(p)
      if (i >= 0) this.addedPaths.splice(i, 1)
      this.addedPaths.unshift(p)
    }
    const parsed = parseWorkflowCommands(stdout)
    const result: StepResult = {
      name,
      kind,
      exitCode: exit.code ?? 128 + (exit.signal === 'SIGKILL' ? 9 : 15),
      signal: exit.signal ?? undefined,
      stdout,
      stderr,
      log: parsed.log + (stderr ? `\n${stderr}` : ''),
      outputs,
      annotations: parsed.annotations,
      masks: parsed.masks,
      summary: readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8'),
      state,
      env: envAdds,
      paths,
      durationMs: Date.now() - started,
      stdioHeld: !closed
    }
    this.steps.push(result)
    return result
  }

  /**
   * The end of the job: the runner kills every process that still carries this job's RUNNER_TRACKING_ID.
   * Returns the pids it had to kill (an action that cleans up after itself leaves none).
   */
  async end(): Promise<{ killed: number[] }> {
    if (this.ended) return { killed: [] }
    this.ended = true
    const killed = processesWithEnv('RUNNER_TRACKING_ID', this.trackingId)
    for (const pid of killed) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        /* gone */
      }
    }
    if (!this.opts.keepFiles) rmSync(this.root, { recursive: true, force: true })
    return { killed }
  }
}

/** Parses GITHUB_OUTPUT / GITHUB_ENV / GITHUB_STATE as the runner does: `name=value` and `name<<DELIM` blocks. */
export function parseFileCommand(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (line === '') continue
    const eq = line.indexOf('=')
    const heredoc = line.indexOf('<<')
    if (eq >= 0 && (heredoc < 0 || eq < heredoc)) {
      const name = line.slice(0, eq)
      if (!name) throw new Error(`invalid file command line: ${line}`)
      out[name] = line.slice(eq + 1)
    } else if (heredoc >= 0) {
      const name = line.slice(0, heredoc)
      const delim = line.slice(heredoc + 2)
      if (!name || !delim) throw new Error(`invalid file command line: ${line}`)
      const value: string[] = []
      let j = i + 1
      for (; j < lines.length && lines[j] !== delim; j++) value.push(lines[j])
      if (j >= lines.length) throw new Error(`file command: no closing delimiter ${delim} for ${name}`)
      out[name] = value.join('\n')
      i = j
    } else {
      throw new Error(`invalid file command line: ${line}`)
    }
  }
  return out
}

function unescapeData(s: string): string {
  return s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%25/g, '%')
}
function unescapeProperty(s: string): string {
  return unescapeData(s).replace(/%3A/g, ':').replace(/%2C/g, ',')
}

/** Reads `::command props::message` lines from a step's stdout. */
export function parseWorkflowCommands(stdout: string): { annotations: Annotation[]; masks: string[]; log: string } {
  const annotations: Annotation[] = []
  const masks: string[] = []
  const log: string[] = []
  for (const line of stdout.split('\n')) {
    const m = /^::([a-z-]+)(?: ([^:]*))?::(.*)$/.exec(line)
    if (!m) {
      log.push(line)
      continue
    }
    const [, command, props, data] = m
    const properties: Record<string, string> = {}
    for (const p of (props ?? '').split(',').filter(Boolean)) {
      const k = p.indexOf('=')
      if (k > 0) properties[p.slice(0, k)] = unescapeProperty(p.slice(k + 1))
    }
    if (command === 'add-mask') masks.push(unescapeData(data))
    else if (command === 'notice' || command === 'warning' || command === 'error' || command === 'debug') {
      annotations.push({ level: command, message: unescapeData(data), properties })
      log.push(`${command === 'debug' ? '##[debug]' : `${command.charAt(0).toUpperCase()}${command.slice(1)}: `}${unescapeData(data)}`)
    } else if (command === 'group') log.push(`▸ ${unescapeData(data)}`)
    else if (command === 'endgroup') continue
    else log.push(line)
  }
  return { annotations, masks, log: log.join('\n') }
}

/** Pids (other than this process) whose environment has NAME=VALUE (Linux /proc). */
export function processesWithEnv(name: string, value: string): number[] {
  const needle = Buffer.from(`${name}=${value}\0`)
  const pids: number[] = []
  let entries: string[] = []
  try {
    entries = readdirSync('/proc')
  } catch {
    return pids
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue
    const pid = Number(e)
    if (pid === process.pid) continue
    try {
      const environ = readFileSync(`/proc/${pid}/environ`)
      if (environ.includes(needle) && processAlive(pid)) pids.push(pid)
    } catch {
      /* gone, or not ours to read */
    }
  }
  return pids
}

/** True while the process runs (a zombie, exited but not yet reaped, does not count). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** A bare repository plus helpers to clone it, for publish tests and the demo. */
export class LocalRemote {
  readonly dir: string
  readonly bare: string
  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'leasefence-remote-'))
    this.bare = join(this.dir, 'site.git')
    git(['init', '--bare', '--initial-branch=main', this.bare], this.dir)
    const seed = join(this.dir, 'seed')
    git(['clone', this.bare, seed], this.dir)
    writeFileSync(join(seed, 'site.txt'), 'site\n')
    git(['add', 'site.txt'], seed)
    git([...IDENTITY, 'commit', '-m', 'seed'], seed)
    git(['push', 'origin', 'HEAD:main'], seed)
  }
  /** `git log` of main on the remote: subject and body of each commit, newest first. */
  log(): { subject: string; body: string }[] {
    const out = git(['log', '--format=%s%x1f%b%x1e', 'main'], this.bare)
    return out
      .split('\x1e')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((s) => {
        const [subject, body] = s.split('\x1f')
        return { subject, body: body ?? '' }
      })
  }
  file(path: string): string {
    return git(['show', `main:${path}`], this.bare)
  }
  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true })
  }
}

export const IDENTITY = ['-c', 'user.name=leasefence-test', '-c', 'user.email=leasefence@example.invalid']

export function git(args: string[], cwd: string): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } })
}

/**
 * Throws unless the process has exited. `kill -0` must fail; on a machine whose init does not reap
 * orphans (this one: PID 1 is not an init that waits for adopted children), an exited detached process
 * stays a zombie, which `kill -0` still finds: the /proc state tells it has exited.
 */
export function expectGone(pid: number): void {
  let signalable = true
  try {
    process.kill(pid, 0)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') signalable = false
  }
  if (!signalable) return
  let state = '?'
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  } catch {
    return
  }
  if (state !== 'Z' && state !== 'X') throw new Error(`process ${pid} is still running (state ${state})`)
}
