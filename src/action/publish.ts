import { spawn } from 'node:child_process'
import * as core from '@actions/core'
import type { ConnectionSettings } from '../core/connection'
import { StaleFencingError } from '../core/errors'
import { LeaseStore } from '../core/lease-store'
import { STATE_DIR_ENV } from '../core/local-state'
import { setLogSink } from '../core/log'
import { validateOwner, validateResource, validateToken } from '../core/options'
import { checkGate, EXIT_FENCED, type GateOutcome } from '../core/publish'
import { planGate } from '../core/dry-run'
import { DISABLED_BANNER, runMode, type RunMode } from '../core/modes'

/** The connection main exported for later steps (the same variables the CLI reads). */
export function connectionFromEnv(env: NodeJS.ProcessEnv): ConnectionSettings {
  return {
    projectId: env.LEASEFENCE_PROJECT || undefined,
    database: env.LEASEFENCE_DATABASE || undefined,
    collection: env.LEASEFENCE_COLLECTION || undefined,
    gateCollection: env.LEASEFENCE_GATE_COLLECTION || undefined,
    keyFilename: env.LEASEFENCE_CREDENTIALS_FILE || undefined
  }
}

/** Why the gate said no, for people: which newer token won, or that the lease was lost. */
export function refusalMessage(outcome: Extract<GateOutcome, { passed: false }>, token: number): string {
  const e = outcome.error
  if (e instanceof StaleFencingError) {
    return (
      `publish refused, the command did not run: token ${e.newestToken}${e.newestOwner ? ` (owner ${e.newestOwner})` : ''} ` +
      `already passed the gate, so this job's token ${e.token} is stale`
    )
  }
  return `publish refused, the command did not run: this job's lease (token ${token}) is lost: ${e.reason}`
}

/**
 * The publish sub-action: pass the fencing gate with the lease main exported, then run `run` with bash.
 * Exit code: the command's own; 75 when the gate refused (the command did not run).
 */
export async function runPublish(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  setLogSink(core.info)
  core.setOutput('published', 'false')
  const run = core.getInput('run')
  if (!run) {
    core.setFailed('leasefence publish: the run input is empty; give the command that publishes, e.g. run: git push origin HEAD:main')
    return
  }
  let mode: RunMode
  try {
    mode = runMode(env)
  } catch (err) {
    core.setFailed(`leasefence publish: ${(err as Error).message}`)
    return
  }
  if (mode === 'disabled') {
    core.warning(`${DISABLED_BANNER} Publishing without the gate.`, { title: 'leasefence: DISABLED' })
    return finishWith(await runBash(run))
  }
  const resource = env.LEASEFENCE_RESOURCE ?? ''
  const owner = env.LEASEFENCE_OWNER ?? ''
  const tokenText = env.LEASEFENCE_FENCING_TOKEN ?? ''
  if (!resource || !owner || !tokenText) {
    core.setFailed(
      'leasefence publish: this job holds no lease (LEASEFENCE_RESOURCE / LEASEFENCE_OWNER / LEASEFENCE_FENCING_TOKEN are not set). ' +
        'Run the leasefence action earlier in the job, and guard this step with if: steps.<id>.outputs.acquired == \'true\'.'
    )
    process.exitCode = EXIT_FENCED
    return
  }
  let token: number
  try {
    validateResource(resource)
    validateOwner(owner)
    token = validateToken(tokenText)
  } catch (err) {
    core.setFailed(`leasefence publish: ${(err as Error).message}`)
    return
  }

  const store = new LeaseStore(connectionFromEnv(env))
  if (mode === 'dry-run') {
    try {
      const plan = await planGate(store, resource, token)
      core.notice(plan.message, { title: 'leasefence: dry run' })
    } finally {
      await store.close().catch(() => undefined)
    }
    return finishWith(await runBash(run))
  }
  let outcome: GateOutcome
  try {
    outcome = await checkGate(store, { resource, owner, token, stateDir: env[STATE_DIR_ENV] || undefined })
  } catch (err) {
    core.setFailed(`leasefence publish: the gate could not be checked, so the command did not run: ${(err as Error).message}`)
    return
  } finally {
    await store.close().catch(() => undefined)
  }
  if (!outcome.passed) {
    core.setFailed(`leasefence: ${refusalMessage(outcome, token)}`)
    process.exitCode = EXIT_FENCED
    return
  }
  core.info(`leasefence: gate passed with token ${token} (highest before: ${outcome.pass.previousToken}); running the publish command`)
  finishWith(await runBash(run))
}

function finishWith(code: number): void {
  if (code !== 0) {
    core.setFailed(`leasefence publish: the command exited with code ${code}`)
    process.exitCode = code
    return
  }
  core.setOutput('published', 'true')
}

/** `bash -e -o pipefail -c RUN` with the step's stdio and environment; signals are passed on. */
function runBash(run: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', run], { stdio: 'inherit', env: process.env })
    const forward = (sig: NodeJS.Signals) => child.kill(sig)
    process.on('SIGINT', forward)
    process.on('SIGTERM', forward)
    const done = (code: number) => {
      process.off('SIGINT', forward)
      process.off('SIGTERM', forward)
      resolve(code)
    }
    child.on('error', (err) => {
      core.error(`leasefence publish: could not start bash: ${err.message}`)
      done(127)
    })
    child.on('exit', (code, signal) => done(code ?? (signal === 'SIGKILL' ? 137 : signal === 'SIGINT' ? 130 : 143)))
  })
}
