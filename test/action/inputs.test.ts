import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { parse } from 'yaml'
import { ValidationError } from '../../src/core/errors'
import { defaultOwner, holderMetadata, INPUT_NAMES, inputEnvName, parseCredentialsJson, parseInputs, readContext, type EnvLike } from '../../src/action/inputs'
import { decodeState, encodeState } from '../../src/action/state'
import { REPO_ROOT } from '../support/runner'

const CONTEXT: EnvLike = {
  GITHUB_REPOSITORY: 'octo-org/site',
  GITHUB_RUN_ID: '4242',
  GITHUB_RUN_ATTEMPT: '2',
  GITHUB_JOB: 'publish',
  GITHUB_WORKFLOW: 'Nightly',
  GITHUB_ACTOR: 'octocat',
  GITHUB_SERVER_URL: 'https://github.example.com',
  GOOGLE_CLOUD_PROJECT: 'my-project-1'
}

/** The environment the runner gives the step: every input set (the default when not given). */
function env(inputs: Record<string, string> = {}, extra: EnvLike = {}): EnvLike {
  const e: EnvLike = { ...CONTEXT, ...extra }
  for (const name of INPUT_NAMES) e[inputEnvName(name)] = ''
  for (const [k, v] of Object.entries(inputs)) e[inputEnvName(k)] = v
  return e
}

function error(inputs: Record<string, string>, extra: EnvLike = {}): string {
  try {
    parseInputs(env(inputs, extra), { nonce: 'n0nce' })
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError)
    return (err as Error).message
  }
  throw new Error(`expected ${JSON.stringify(inputs)} to be rejected`)
}

const SA_KEY = JSON.stringify({
  type: 'service_account',
  project_id: 'key-project',
  private_key_id: 'abcdef0123456789',
  private_key: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n',
  client_email: 'lease@key-project.iam.gserviceaccount.com'
})

describe('parseInputs', () => {
  test('defaults', () => {
    const s = parseInputs(env(), { nonce: 'n0nce' })
    expect(s).toMatchObject({
      resource: 'octo-org/site',
      ttlMs: 90_000,
      heartbeatMs: 30_000,
      onBusy: 'skip',
      waitTimeoutMs: 15 * 60_000,
      maxHoldMs: 6 * 3_600_000,
      owner: 'octo-org/site/runs/4242/attempts/2/jobs/publish/n0nce',
      ownerDefaulted: true,
      projectId: 'my-project-1',
      projectSource: 'environment',
      database: '(default)',
      collection: 'leases',
      gateCollection: 'publish_gate'
    })
    expect(s.credentialsJson).toBeUndefined()
  })

  test('the input names follow the runner: upper case, spaces to _, hyphens kept', () => {
    expect(inputEnvName('on-busy')).toBe('INPUT_ON-BUSY')
    expect(inputEnvName('gate collection')).toBe('INPUT_GATE_COLLECTION')
    const s = parseInputs({ ...CONTEXT, 'INPUT_ON-BUSY': ' wait ', 'INPUT_WAIT-TIMEOUT': '2m', INPUT_TTL: '30s', INPUT_HEARTBEAT: '5s' })
    expect(s).toMatchObject({ onBusy: 'wait', waitTimeoutMs: 120_000, ttlMs: 30_000, heartbeatMs: 5_000 })
  })

  test('every value given', () => {
    const s = parseInputs(
      env({
        resource: 'env:staging/ünïcødé',
        ttl: '2m',
        heartbeat: '40s',
        'on-busy': 'FAIL',
        'wait-timeout': '90',
        owner: 'deploy-bot',
        'max-hold': '1h',
        'project-id': 'other-project',
        database: 'leases-db',
        collection: 'locks',
        'gate-collection': 'gates'
      })
    )
    expect(s).toMatchObject({
      resource: 'env:staging/ünïcødé',
      ttlMs: 120_000,
      heartbeatMs: 40_000,
      onBusy: 'fail',
      waitTimeoutMs: 90_000,
      owner: 'deploy-bot',
      ownerDefaulted: false,
      maxHoldMs: 3_600_000,
      projectId: 'other-project',
      projectSource: 'input',
      database: 'leases-db',
      collection: 'locks',
      gateCollection: 'gates'
    })
  })

  test('the default owner is unique per job attempt (and per use, through the nonce)', () => {
    const a = parseInputs(env()).owner
    const b = parseInputs(env()).owner
    expect(a).not.toBe(b)
    expect(a).toMatch(/^octo-org\/site\/runs\/4242\/attempts\/2\/jobs\/publish\/[0-9a-f]{8}$/)
    expect(defaultOwner(readContext({}), 'x')).toBeUndefined()
  })

  test('holder metadata links to the run attempt', () => {
    const meta = holderMetadata(readContext(CONTEXT))
    expect(meta).toEqual({
      kind: 'github-actions',
      runUrl: 'https://github.example.com/octo-org/site/actions/runs/4242/attempts/2',
      repository: 'octo-org/site',
      runId: '4242',
      runAttempt: '2',
      workflow: 'Nightly',
      job: 'publish',
      actor: 'octocat'
    })
  })

  test('project id: input, then GOOGLE_CLOUD_PROJECT / GCLOUD_PROJECT, then the key, then the emulator', () => {
    const noProject = { GOOGLE_CLOUD_PROJECT: undefined }
    expect(parseInputs(env({}, { ...noProject, GCLOUD_PROJECT: 'gcloud-proj' })).projectId).toBe('gcloud-proj')
    expect(parseInputs(env({ 'credentials-json': SA_KEY }, noProject))).toMatchObject({ projectId: 'key-project', projectSource: 'credentials' })
    expect(parseInputs(env({ 'credentials-json': SA_KEY }))).toMatchObject({ projectId: 'my-project-1', projectSource: 'environment' })
    expect(parseInputs(env({}, { ...noProject, FIRESTORE_EMULATOR_HOST: '127.0.0.1:1' }))).toMatchObject({ projectSource: 'emulator' })
    expect(parseInputs(env({}, { ...noProject, GOOGLE_APPLICATION_CREDENTIALS: '/tmp/adc.json' }))).toMatchObject({
      projectId: undefined,
      projectSource: 'credentials-file'
    })
    expect(error({}, noProject)).toMatch(/project-id: not set.*google-github-actions\/auth/)
  })

  test('credentials-json: parsed, its secrets listed for masking, never echoed in errors', () => {
    const s = parseInputs(env({ 'credentials-json': SA_KEY }))
    expect(s.credentialsJson).toBe(SA_KEY)
    expect(s.credentials).toMatchObject({ type: 'service_account', projectId: 'key-project', clientEmail: 'lease@key-project.iam.gserviceaccount.com' })
    expect(s.credentials!.secrets).toContain('abcdef0123456789')
    expect(s.credentials!.secrets).toContain('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC')
    const secret = '{"type":"service_account","private_key":"TOPSECRET"'
    expect(error({ 'credentials-json': secret })).not.toContain('TOPSECRET')
    expect(error({ 'credentials-json': '{"type":"service_account","private_key":"TOPSECRET"}' })).toMatch(/needs "client_email"/)
    expect(error({ 'credentials-json': './key.json' })).toMatch(/looks like a file path/)
    expect(error({ 'credentials-json': '[1]' })).toMatch(/must be a JSON object/)
    expect(error({ 'credentials-json': '{"type":"wat"}' })).toMatch(/"type" is "wat"/)
    expect(parseCredentialsJson('{"type":"external_account","audience":"x"}')).toMatchObject({ type: 'external_account', secrets: [] })
  })

  test.each([
    [{ ttl: 'soon' }, /^ttl: "soon" is not a duration/],
    [{ ttl: '500ms' }, /^ttl: 500ms is too short; use at least 1s/],
    [{ ttl: '9s', heartbeat: '4s' }, /^heartbeat: 4000ms is more than a third of ttl \(9000ms\); use a heartbeat of at most 3000ms or raise ttl to at least 12000ms/],
    [{ heartbeat: 'fast' }, /^heartbeat: "fast" is not a duration/],
    [{ ttl: '1s', heartbeat: '100ms' }, /^heartbeat: 100ms is too short/],
    [{ 'on-busy': 'queue' }, /^on-busy: "queue" is not a mode; use one of skip, wait, fail/],
    [{ 'wait-timeout': 'forever' }, /^wait-timeout: "forever" is not a duration/],
    [{ 'wait-timeout': '0' }, /^wait-timeout: must be longer than 0/],
    [{ 'max-hold': '1s' }, /^max-hold: 1000ms is shorter than ttl/],
    [{ owner: '   ' }, /^owner: is blank/],
    [{ owner: 'x'.repeat(2000) }, /^owner: keep it under 1024 characters/],
    [{ resource: '  ' }, /^resource: is blank/],
    [{ 'project-id': 'My Project' }, /^project-id: "My Project" is not a Google Cloud project id/],
    [{ database: 'Bad_DB' }, /^database: "Bad_DB" is not a Firestore database id/],
    [{ collection: 'a/b' }, /^collection: "a\/b" is not a usable collection id/],
    [{ collection: 'locks', 'gate-collection': 'locks' }, /^gate-collection: must differ from collection/]
  ] as [Record<string, string>, RegExp][])('rejects %j', (inputs, message) => {
    expect(error(inputs)).toMatch(message)
  })

  test('several bad inputs are reported together', () => {
    const msg = error({ ttl: 'x', 'on-busy': 'maybe', owner: ' ' })
    expect(msg).toMatch(/^3 inputs are invalid:\n- ttl: .*\n- on-busy: .*\n- owner: /)
  })

  test('outside Actions: no repository means resource and owner must be given', () => {
    const e = { INPUT_RESOURCE: '', GOOGLE_CLOUD_PROJECT: 'my-project-1' }
    expect(error({}, { GITHUB_REPOSITORY: undefined, GITHUB_RUN_ID: undefined, GITHUB_JOB: undefined })).toMatch(/resource: not set/)
    expect(parseInputs({ ...e, INPUT_RESOURCE: 'r', INPUT_OWNER: 'me' })).toMatchObject({ resource: 'r', owner: 'me' })
  })

  test('action.yml declares exactly the inputs parsed here, with matching defaults', () => {
    const doc = parse(readFileSync(join(REPO_ROOT, 'action.yml'), 'utf8')) as { inputs: Record<string, { default?: string; description?: string }> }
    expect(Object.keys(doc.inputs).sort()).toEqual([...INPUT_NAMES].sort())
    for (const [name, def] of Object.entries(doc.inputs)) expect(def.description, name).toBeTruthy()
    // The defaults written in action.yml parse to the same settings as leaving every input empty.
    const fromYaml: EnvLike = { ...CONTEXT }
    for (const [name, def] of Object.entries(doc.inputs)) {
      fromYaml[inputEnvName(name)] = String(def.default ?? '').replace('${{ github.repository }}', CONTEXT.GITHUB_REPOSITORY!).replace('${{ github.token }}', '')
    }
    expect(parseInputs(fromYaml, { nonce: 'n' })).toEqual(parseInputs(env(), { nonce: 'n' }))
  })
})

describe('state', () => {
  test('round trip through saveState-like strings', () => {
    const s = {
      phase: 'acquired' as const,
      resource: 'a/b',
      owner: 'me',
      token: 7,
      ttlMs: 2000,
      heartbeatMs: 666,
      stateDir: '/tmp/x',
      heartbeatPid: 1234,
      acquiredAt: '2026-01-01T00:00:00.000Z',
      waitedMs: 15,
      connection: { projectId: 'p', collection: 'leases' }
    }
    const saved = encodeState(s)
    expect(saved.token).toBe('7')
    expect(decodeState((k) => saved[k] ?? '')).toMatchObject(s)
    expect(decodeState(() => '')).toBeUndefined()
  })
})
