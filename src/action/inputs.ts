import { randomBytes } from 'node:crypto'
import { resolveConnection, DEFAULT_COLLECTION, DEFAULT_DATABASE, DEFAULT_GATE_COLLECTION } from '../core/connection'
import { parseDuration } from '../core/duration'
import { ValidationError } from '../core/errors'
import { DEFAULT_TTL, DEFAULT_WAIT_TIMEOUT, parseOnBusy, parseQueueMode, parseTimings, validateOwner, validateResource, type OnBusy, type QueueMode } from '../core/options'
import { parseBool } from '../core/modes'
import { DEFAULT_SLOT_LAYOUT, validateLayout, validateSlots, type SlotLayout } from '../core/slots'

/**
 * The action's inputs, parsed and validated in one pure function (no I/O, no @actions/core), so that
 * every bad input is reported before anything touches Firestore and the rules are unit-testable.
 */

export type EnvLike = Record<string, string | undefined>

/** The runner's naming: `INPUT_` + name upper-cased with spaces as `_`; hyphens are kept (`INPUT_ON-BUSY`). */
export function inputEnvName(name: string): string {
  return `INPUT_${name.replace(/ /g, '_').toUpperCase()}`
}

/** Like core.getInput: the value trimmed, '' when unset. */
export function readInput(env: EnvLike, name: string): string {
  return (env[inputEnvName(name)] ?? '').trim()
}

export const DEFAULT_MAX_HOLD = '6h'

/** Every input of action.yml, with its default as the runner applies it (the text of action.yml). */
export const INPUT_NAMES = [
  'resource',
  'ttl',
  'heartbeat',
  'on-busy',
  'wait-timeout',
  'owner',
  'max-hold',
  'project-id',
  'database',
  'collection',
  'gate-collection',
  'credentials-json',
  'queue',
  'stuck-threshold',
  'github-token',
  'slots',
  'port-base',
  'ports-per-slot',
  'schema-prefix',
  'env-file',
  'force-release',
  'reason',
  'dry-run',
  'env-slots',
  'env-database-url',
  'env-template',
  'env-worktree',
  'env-base-ref',
  'env-port-bases',
  'env-keep'
] as const
export type InputName = (typeof INPUT_NAMES)[number]

/** What the workflow run tells about itself (GITHUB_* variables). */
export interface JobContext {
  repository: string
  runId: string
  runAttempt: string
  job: string
  workflow: string
  actor: string
  serverUrl: string
  runnerName: string
  /** `https://github.com/o/r/actions/runs/123/attempts/2`, or '' outside Actions. */
  runUrl: string
}

export function readContext(env: EnvLike): JobContext {
  const repository = env.GITHUB_REPOSITORY ?? ''
  const runId = env.GITHUB_RUN_ID ?? ''
  const runAttempt = env.GITHUB_RUN_ATTEMPT || '1'
  const serverUrl = (env.GITHUB_SERVER_URL || 'https://github.com').replace(/\/+$/, '')
  return {
    repository,
    runId,
    runAttempt,
    job: env.GITHUB_JOB ?? '',
    workflow: env.GITHUB_WORKFLOW ?? '',
    actor: env.GITHUB_ACTOR ?? '',
    serverUrl,
    runnerName: env.RUNNER_NAME ?? '',
    runUrl: repository && runId ? `${serverUrl}/${repository}/actions/runs/${runId}/attempts/${runAttempt}` : ''
  }
}

/** Metadata stored in the lease so that a busy job can say who holds it and link to that run. */
export function holderMetadata(ctx: JobContext): Record<string, string> {
  const meta: Record<string, string> = { kind: 'github-actions' }
  const fields: [string, string][] = [
    ['runUrl', ctx.runUrl],
    ['repository', ctx.repository],
    ['runId', ctx.runId],
    ['runAttempt', ctx.runAttempt],
    ['workflow', ctx.workflow],
    ['job', ctx.job],
    ['actor', ctx.actor],
    ['runner', ctx.runnerName]
  ]
  for (const [k, v] of fields) if (v) meta[k] = v
  return meta
}

/**
 * The default owner: unique per job attempt. Repository, run id, attempt and job id name it for people;
 * the random suffix separates matrix legs (which share GITHUB_JOB) and two uses of the action in one job.
 */
export function defaultOwner(ctx: JobContext, nonce: string): string | undefined {
  if (!ctx.repository || !ctx.runId || !ctx.job) return undefined
  return `${ctx.repository}/runs/${ctx.runId}/attempts/${ctx.runAttempt}/jobs/${ctx.job}/${nonce}`
}

/** The parts of a credentials JSON we act on; the secret itself is kept only in `credentialsJson`. */
export interface CredentialsInfo {
  type: string
  projectId?: string
  clientEmail?: string
  /** Values to mask in logs besides the whole JSON (the key, its id, each line of the key). */
  secrets: string[]
}

export interface ActionInputs {
  resource: string
  ttlMs: number
  heartbeatMs: number
  onBusy: OnBusy
  waitTimeoutMs: number
  /** The heartbeat stops renewing, and releases, after this long even when post never comes. */
  maxHoldMs: number
  owner: string
  ownerDefaulted: boolean
  /** undefined: the client finds it from the credentials (Application Default Credentials). */
  projectId?: string
  projectSource: 'input' | 'environment' | 'credentials' | 'emulator' | 'credentials-file'
  database: string
  collection: string
  gateCollection: string
  credentialsJson?: string
  credentials?: CredentialsInfo
  context: JobContext
  /** wait / supersede: FIFO tickets or a free-for-all. */
  queue: QueueMode
  /** Skips against one holder before a lock_stuck warning (0 = never). */
  stuckThreshold: number
  /** For the liveness-aware takeover (`${{ github.token }}` by default); '' disables it. */
  githubToken: string
  /** N-slot leasing: lease one free slot of `resource` among `slots`. */
  slots: number
  /** Whether the slot inputs were used (then the slot outputs are set). */
  slotted: boolean
  layout: SlotLayout
  envFile?: string
  /** Operator control: expire the lease whoever holds it (with `reason`, audited), acquire nothing. */
  forceRelease: boolean
  reason: string
  dryRun: boolean
  /** Environment mode (env-slots > 0): provision the slot's ports, schema and worktree. */
  env?: EnvInputs
}

export interface EnvInputs {
  slots: number
  /** Admin URL of the PostgreSQL database (a secret: masked). */
  databaseUrl?: string
  template?: string
  worktree: boolean
  baseRef: string
  /** `dev=3000,api=4000,db-proxy=5000` style; '' for the default. */
  portBases: string
  /** Leave the environment in place at post (the lease is still released). */
  keep: boolean
}

// Google Cloud project ids: 6-30 lowercase letters, digits, hyphens, starting with a letter, not ending
// with a hyphen; legacy domain-scoped ids are `example.com:my-project`.
const PROJECT_RE = /^(?:[a-z0-9][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$/
// Firestore database ids: `(default)` or 4-63 lowercase letters, digits, hyphens; letter first.
const DATABASE_RE = /^[a-z][a-z0-9-]{2,61}[a-z0-9]$/

const CREDENTIAL_TYPES = ['service_account', 'external_account', 'authorized_user', 'impersonated_service_account', 'external_account_authorized_user']

/** Parses a credentials-json input without ever putting its content into an error message. */
export function parseCredentialsJson(text: string): CredentialsInfo {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    const hint = /^[./~]|\.json$/i.test(text) && !text.includes('{')
      ? ' (it looks like a file path: pass the file\'s content, e.g. ${{ secrets.GCP_SA_KEY }}, or use google-github-actions/auth and leave credentials-json empty)'
      : ' (pass the whole key file content, e.g. ${{ secrets.GCP_SA_KEY }})'
    throw new ValidationError(`credentials-json: is not valid JSON${hint}`)
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new ValidationError('credentials-json: must be a JSON object (a service-account key or an external-account configuration)')
  }
  const obj = data as Record<string, unknown>
  const type = typeof obj.type === 'string' ? obj.type : ''
  if (!CREDENTIAL_TYPES.includes(type)) {
    throw new ValidationError(
      `credentials-json: "type" is ${type ? `"${type}"` : 'missing'}; expected one of ${CREDENTIAL_TYPES.join(', ')} ` +
        '(download a key with `gcloud iam service-accounts keys create`, or prefer google-github-actions/auth)'
    )
  }
  if (type === 'service_account') {
    for (const field of ['client_email', 'private_key']) {
      if (typeof obj[field] !== 'string' || !(obj[field] as string).trim()) {
        throw new ValidationError(`credentials-json: a service_account key needs "${field}"; the value given has none`)
      }
    }
  }
  const secrets: string[] = []
  for (const field of ['private_key', 'private_key_id', 'client_secret', 'refresh_token']) {
    const v = obj[field]
    if (typeof v !== 'string' || !v) continue
    secrets.push(v)
    // The runner masks line by line: register each line of a multi-line key too.
    for (const line of v.split(/\r?\n/)) if (line.trim().length >= 8) secrets.push(line.trim())
  }
  const projectId =
    typeof obj.project_id === 'string' && obj.project_id
      ? obj.project_id
      : typeof obj.quota_project_id === 'string' && obj.quota_project_id
        ? obj.quota_project_id
        : undefined
  return {
    type,
    projectId,
    clientEmail: typeof obj.client_email === 'string' ? obj.client_email : undefined,
    secrets
  }
}

export interface ParseOptions {
  /** The random part of the default owner (tests pass a fixed one). */
  nonce?: string
}

/**
 * From the step's environment (INPUT_*, GITHUB_*, GOOGLE_CLOUD_PROJECT, ...) to typed settings.
 * Throws one ValidationError listing every bad input, each with what to change.
 */
export function parseInputs(env: EnvLike, opts: ParseOptions = {}): ActionInputs {
  const errors: string[] = []
  const attempt = <T>(fn: () => T): T | undefined => {
    try {
      return fn()
    } catch (err) {
      if (err instanceof ValidationError) {
        errors.push(err.message)
        return undefined
      }
      throw err
    }
  }
  const raw = (name: InputName) => env[inputEnvName(name)] ?? ''
  const input = (name: InputName) => readInput(env, name)
  const context = readContext(env)

  // resource: the runner fills in ${{ github.repository }}; outside it, fall back the same way.
  const resource = input('resource') || context.repository
  if (raw('resource') !== '' && input('resource') === '') {
    errors.push('resource: is blank; leave the input out for the repository, or name what to lock, e.g. resource: my-org/site')
  } else if (!input('resource') && !context.repository) {
    errors.push('resource: not set and GITHUB_REPOSITORY is empty; name what to lock, e.g. resource: my-org/site')
  } else attempt(() => validateResource(resource))

  // ttl and heartbeat: parseTimings checks ttl >= 1s and 250ms <= heartbeat <= ttl/3.
  const timings = attempt(() => parseTimings(input('ttl') || DEFAULT_TTL, input('heartbeat') || undefined))

  const onBusy = attempt(() => parseOnBusy(input('on-busy'), 'skip'))

  const waitTimeoutMs = attempt(() => {
    const ms = parseDuration(input('wait-timeout') || DEFAULT_WAIT_TIMEOUT, 'wait-timeout')
    if (ms <= 0) throw new ValidationError('wait-timeout: must be longer than 0; to give up at once use on-busy: fail')
    return ms
  })

  const maxHoldMs = attempt(() => {
    const ms = parseDuration(input('max-hold') || DEFAULT_MAX_HOLD, 'max-hold')
    if (timings && ms < timings.ttlMs) {
      throw new ValidationError(`max-hold: ${ms}ms is shorter than ttl (${timings.ttlMs}ms); use at least the ttl, e.g. the job's timeout-minutes`)
    }
    return ms
  })

  // owner: '' means the default; a value of only spaces is a mistake worth reporting.
  let owner = input('owner')
  let ownerDefaulted = false
  if (raw('owner') !== '' && owner === '') {
    errors.push('owner: is blank; leave the input out for the default (unique per job attempt) or give a non-empty id')
  } else if (owner === '') {
    const d = defaultOwner(context, opts.nonce ?? randomBytes(4).toString('hex'))
    if (d) {
      owner = d
      ownerDefaulted = true
    } else {
      errors.push('owner: not set, and GITHUB_REPOSITORY / GITHUB_RUN_ID / GITHUB_JOB are missing to make the default; set owner')
    }
  } else attempt(() => validateOwner(owner))

  // Connection.
  let credentials: CredentialsInfo | undefined
  const credentialsJson = input('credentials-json') || undefined
  if (credentialsJson) credentials = attempt(() => parseCredentialsJson(credentialsJson))

  let projectId: string | undefined = input('project-id') || undefined
  let projectSource: ActionInputs['projectSource'] = 'input'
  if (projectId) {
    if (!PROJECT_RE.test(projectId)) {
      errors.push(
        `project-id: "${projectId}" is not a Google Cloud project id (6-30 lowercase letters, digits and hyphens, starting with a letter); ` +
          'use the project ID, not its name or number'
      )
    }
  } else if (env.GOOGLE_CLOUD_PROJECT || env.GCLOUD_PROJECT) {
    projectId = env.GOOGLE_CLOUD_PROJECT || env.GCLOUD_PROJECT
    projectSource = 'environment'
  } else if (credentials?.projectId) {
    projectId = credentials.projectId
    projectSource = 'credentials'
  } else if (env.FIRESTORE_EMULATOR_HOST) {
    projectId = resolveConnection({}, { FIRESTORE_EMULATOR_HOST: env.FIRESTORE_EMULATOR_HOST }).projectId
    projectSource = 'emulator'
  } else if (env.GOOGLE_APPLICATION_CREDENTIALS) {
    projectSource = 'credentials-file'
  } else {
    errors.push(
      'project-id: not set, and there is no GOOGLE_CLOUD_PROJECT, GCLOUD_PROJECT, credentials-json or GOOGLE_APPLICATION_CREDENTIALS ' +
        'to find it from; run google-github-actions/auth before this step, or set project-id'
    )
  }

  const database = input('database') || DEFAULT_DATABASE
  if (database !== DEFAULT_DATABASE && !DATABASE_RE.test(database)) {
    errors.push(`database: "${database}" is not a Firestore database id; use (default) or 4-63 lowercase letters, digits and hyphens`)
  }
  const conn = attempt(() =>
    resolveConnection({ collection: input('collection') || DEFAULT_COLLECTION, gateCollection: input('gate-collection') || DEFAULT_GATE_COLLECTION }, {})
  )

  const queue = attempt(() => parseQueueMode(input('queue'))) ?? 'fifo'
  const stuckThreshold = attempt(() => wholeNumber(input('stuck-threshold') || '10', 'stuck-threshold', 0)) ?? 10
  const slots = attempt(() => validateSlots(input('slots') || '1')) ?? 1
  // The runner fills in every default, so "were slots asked for" is: more than one, or an env file.
  const slotted = slots > 1 || input('env-file') !== ''
  const layout: SlotLayout = {
    portBase: attempt(() => wholeNumber(input('port-base') || String(DEFAULT_SLOT_LAYOUT.portBase), 'port-base', 1)) ?? 0,
    portsPerSlot: attempt(() => wholeNumber(input('ports-per-slot') || String(DEFAULT_SLOT_LAYOUT.portsPerSlot), 'ports-per-slot', 1)) ?? 0,
    schemaPrefix: input('schema-prefix') || DEFAULT_SLOT_LAYOUT.schemaPrefix
  }
  if (layout.portBase && layout.portsPerSlot) attempt(() => validateLayout(layout, slots))
  const forceRelease = attempt(() => parseBool(input('force-release'), 'force-release')) ?? false
  const reason = input('reason')
  if (forceRelease && !reason) {
    errors.push('reason: force-release needs a reason (it is written to the audit trail), e.g. reason: "runner died, see INC-123"')
  }
  const dryRun = attempt(() => parseBool(input('dry-run'), 'dry-run')) ?? false
  let envInputs: EnvInputs | undefined
  const envSlotsText = input('env-slots')
  if (envSlotsText && envSlotsText !== '0') {
    const n = attempt(() => validateSlots(envSlotsText))
    if (slots > 1) errors.push('env-slots: use env-slots (environments) or slots (plain slot leases), not both')
    const databaseUrl = input('env-database-url') || undefined
    const template = input('env-template') || undefined
    if (databaseUrl && !/^postgres(ql)?:\/\//i.test(databaseUrl)) errors.push('env-database-url: use a postgres:// or postgresql:// URL')
    if (databaseUrl && !template) errors.push('env-template: env-database-url needs env-template, the migrated template schema to clone')
    if (template && !/^[a-z_][a-z0-9_]{0,62}$/.test(template)) {
      errors.push(`env-template: "${template}" is not a safe schema name; use only lower-case letters, digits and _`)
    }
    envInputs = {
      slots: n ?? 1,
      databaseUrl,
      template,
      worktree: attempt(() => parseBool(input('env-worktree'), 'env-worktree')) ?? false,
      baseRef: input('env-base-ref') || 'origin/main',
      portBases: input('env-port-bases'),
      keep: attempt(() => parseBool(input('env-keep'), 'env-keep')) ?? false
    }
  }

  if (errors.length) {
    throw new ValidationError(errors.length === 1 ? errors[0] : `${errors.length} inputs are invalid:\n- ${errors.join('\n- ')}`)
  }
  return {
    resource,
    ttlMs: timings!.ttlMs,
    heartbeatMs: timings!.heartbeatMs,
    onBusy: onBusy!,
    waitTimeoutMs: waitTimeoutMs!,
    maxHoldMs: maxHoldMs!,
    owner,
    ownerDefaulted,
    projectId,
    projectSource,
    database,
    collection: conn!.collection,
    gateCollection: conn!.gateCollection,
    credentialsJson,
    credentials,
    context,
    queue,
    stuckThreshold,
    githubToken: input('github-token'),
    slots,
    slotted,
    layout,
    envFile: input('env-file') || undefined,
    forceRelease,
    reason,
    dryRun,
    env: envInputs
  }
}

function wholeNumber(text: string, name: string, min: number): number {
  const n = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) {
    throw new ValidationError(`${name}: "${text}" must be a whole number of at least ${min}`)
  }
  return n
}
