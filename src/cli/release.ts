import { hostname, userInfo } from 'node:os'
import { Command } from 'commander'
import { ValidationError } from '../core/errors'
import { LeaseStore } from '../core/lease-store'
import { logEvent } from '../core/log'
import { forceRelease, listLeases, reapAbandoned } from '../core/operations'
import { validateOwner, validateResource, validateToken } from '../core/options'
import { formatStatusTable } from './status'
import { addConnectionOptions, connectionFrom, type ConnectionFlags } from './settings'

interface ReleaseFlags extends ConnectionFlags {
  force?: boolean
  reason?: string
  actor?: string
  owner?: string
  token?: string
}

export function operatorActor(explicit?: string): string {
  if (explicit) return explicit
  if (process.env.GITHUB_ACTOR) return `${process.env.GITHUB_ACTOR} (GitHub Actions)`
  try {
    return `${userInfo().username}@${hostname()}`
  } catch {
    return hostname()
  }
}

export function releaseCommand(): Command {
  const cmd = new Command('release')
    .description('release a lease: your own (owner + token), or anyone\'s with --force --reason (audited)')
    .argument('<resource>', 'the resource')
    .option('--force', 'expire the lease whoever holds it; keeps the fencing counter')
    .option('--reason <text>', 'why (required with --force; goes into the audit trail)')
    .option('--actor <name>', 'who is forcing it (default: GITHUB_ACTOR or user@host)')
    .option('--owner <id>', 'without --force: the owner (default LEASEFENCE_OWNER)')
    .option('--token <n>', 'without --force: the token (default LEASEFENCE_FENCING_TOKEN)')
    .addHelpText(
      'after',
      `
A forced release expires the lease now; the old holder's heartbeat reports it lost and its gate refuses.
Every forced release is recorded in leases/{id}/audit with the reason and the actor.

Example:
  leasefence release --force --reason "runner died, INC-123" my-org/site`
    )
  addConnectionOptions(cmd)
  cmd.action(async (resource: string, flags: ReleaseFlags) => {
    validateResource(resource)
    const store = new LeaseStore(connectionFrom(flags))
    try {
      if (flags.force) {
        if (!flags.reason?.trim()) throw new ValidationError('release --force needs --reason "why" (it is audited)')
        const r = await forceRelease(store, resource, { reason: flags.reason, actor: operatorActor(flags.actor) })
        logEvent('force_release_lock', { resource, previousOwner: r.previousOwner, token: r.token, wasLive: r.wasLive, reason: flags.reason })
        process.stdout.write(`${r.released ? 'released' : 'nothing to release'}: ${r.reason}\n`)
        return
      }
      const owner = flags.owner ?? process.env.LEASEFENCE_OWNER ?? ''
      validateOwner(owner)
      const token = validateToken(flags.token ?? process.env.LEASEFENCE_FENCING_TOKEN)
      const r = await store.release(resource, owner, token)
      if (r.released) {
        logEvent('release_lock', { resource, token })
        process.stdout.write(`released token ${token}\n`)
      } else {
        logEvent('release_skipped', { resource, token, reason: r.reason })
        process.stdout.write(`not released: ${r.reason}\n`)
      }
    } finally {
      await store.close()
    }
  })
  return cmd
}

export function reapCommand(): Command {
  const cmd = new Command('reap')
    .description('list leases that expired without a release (crashed or paused holders) and mark them reaped')
    .argument('[resource...]', 'limit to these resources')
    .option('--dry-run', 'only list them')
    .option('--actor <name>', 'who reaps (default: GITHUB_ACTOR or user@host)')
  addConnectionOptions(cmd)
  cmd.action(async (resources: string[], flags: ConnectionFlags & { dryRun?: boolean; actor?: string }) => {
    const store = new LeaseStore(connectionFrom(flags))
    try {
      if (flags.dryRun) {
        const rows = (await listLeases(store, resources)).filter((r) => r.abandoned)
        process.stdout.write(formatStatusTable(rows) + '\n')
        return
      }
      const reaped = await reapAbandoned(store, operatorActor(flags.actor), resources)
      process.stdout.write(reaped.length ? formatStatusTable(reaped) + `\nreaped ${reaped.length}\n` : 'nothing to reap\n')
    } finally {
      await store.close()
    }
  })
  return cmd
}
