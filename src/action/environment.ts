import * as core from '@actions/core'
import { LeaseLostError } from '../core/errors'
import type { Lease, LeaseStore } from '../core/lease-store'
import { resourceDocId } from '../core/resource-id'
import { acquireEnvironment, releaseEnvironment, TeardownError, type Environment } from '../env/environment'
import type { ActionInputs, EnvInputs } from './inputs'

/**
 * The action's environment mode (env-slots): lease one slot of an environment pool and provision what
 * the slot means (ports, a cloned schema, a worktree, an env file) through src/env; post tears it down
 * unless env-keep. Thin: the provisioning and teardown live in src/env and are tested there.
 */
export type EnvAcquisition =
  | { acquired: true; lease: Lease; environment: Environment; waitedMs: number }
  | { acquired: false; busy: string }

export async function acquireEnvMode(
  store: LeaseStore,
  inputs: ActionInputs & { env: EnvInputs },
  holder: Record<string, string>,
  signal: AbortSignal
): Promise<EnvAcquisition> {
  const started = performance.now()
  const e = inputs.env
  const r = await acquireEnvironment(store, {
    resource: inputs.resource,
    slots: e.slots,
    agentId: inputs.owner,
    ttlMs: inputs.ttlMs,
    onBusy: inputs.onBusy === 'supersede' ? 'wait' : inputs.onBusy,
    waitTimeoutMs: inputs.waitTimeoutMs,
    signal,
    envFile: inputs.envFile,
    portBases: e.portBases || undefined,
    portsPerSlot: inputs.layout.portsPerSlot,
    schemaPrefix: inputs.layout.schemaPrefix,
    database: e.databaseUrl ? { url: e.databaseUrl, template: e.template } : undefined,
    worktree: e.worktree ? { repo: process.env.GITHUB_WORKSPACE || process.cwd(), baseRef: e.baseRef } : undefined,
    reclaimPorts: true,
    holder,
    onStep: (s) => core.info(`leasefence env: ${s.step}: ${s.action} ${s.detail}`)
  })
  if (!r.acquired) return { acquired: false, busy: r.busy }
  const env = r.environment
  // Provisioning took time since the slot was leased: renew now, and measure the holder's deadline
  // from this confirmed renewal (the heartbeat takes over from here).
  const renewed = await store.renew(env.leaseResource, inputs.owner, env.token, inputs.ttlMs)
  if (!renewed.renewed) throw new LeaseLostError(env.leaseResource, env.token, `lost while provisioning: ${renewed.reason}`)
  const lease: Lease = {
    resource: env.leaseResource,
    docId: resourceDocId(env.leaseResource),
    owner: inputs.owner,
    token: env.token,
    ttlMs: inputs.ttlMs,
    acquiredAt: new Date(),
    expiresAt: renewed.expiresAt,
    deadline: renewed.deadline,
    previousOwner: env.previousOwner,
    previousExpired: env.previousExpired
  }
  for (const w of env.warnings) core.warning(w, { title: 'leasefence env' })
  return { acquired: true, lease, environment: env, waitedMs: performance.now() - started }
}

export function envOutputs(env: Environment): Record<string, string> {
  const out: Record<string, string> = { slot: String(env.slot), port: String(env.devPort) }
  if (env.ports.api !== undefined) out['api-port'] = String(env.ports.api)
  if (env.schema) out.schema = env.schema
  if (env.worktree) out.worktree = env.worktree.path
  return out
}

export type EnvRelease = { released: true; detail: string } | { released: false; reason: string; error?: boolean }

/** Post: tear the slot's environment down and release its lease (only while this job still holds it). */
export async function releaseEnvMode(
  store: LeaseStore,
  args: { resource: string; slot: number; owner: string; token: number; databaseUrl?: string; worktree: boolean }
): Promise<EnvRelease> {
  try {
    const report = await releaseEnvironment(store, {
      resource: args.resource,
      slot: args.slot,
      agentId: args.owner,
      token: args.token,
      database: args.databaseUrl ? { url: args.databaseUrl } : undefined,
      worktree: args.worktree ? { repo: process.env.GITHUB_WORKSPACE || process.cwd() } : undefined,
      onStep: (s) => core.info(`leasefence env: ${s.step}: ${s.action} ${s.detail}`)
    })
    const detail = report.steps.map((s) => `${s.step} ${s.action}`).join(', ')
    return report.lease === 'released' ? { released: true, detail } : { released: false, reason: `the lease was ${report.lease} (${detail})` }
  } catch (err) {
    if (err instanceof TeardownError) return { released: false, reason: err.message, error: true }
    return { released: false, reason: (err as Error).message }
  }
}
