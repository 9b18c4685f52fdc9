import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { Command, Option } from 'commander'
import { parseDuration } from '../core/duration'
import { ValidationError } from '../core/errors'
import { LeaseStore } from '../core/lease-store'
import { validateToken } from '../core/options'
import { formatEnvFile } from '../env/env-file'
import {
  acquireEnvironment,
  DEFAULT_BASE_REF,
  environmentPorts,
  reapEnvironments,
  releaseEnvironment,
  renewEnvironment,
  type Step,
  type TeardownSpec
} from '../env/environment'
import { waitReady } from '../env/ready'
import { operatorActor } from './release'
import { addConnectionOptions, connectionFrom, type ConnectionFlags } from './settings'

/**
 * `leasefence env`: environment leases for parallel agents (one port band, schema and worktree per
 * slot). A thin layer over src/env/environment.ts.
 */

interface LayoutFlags {
  portBase?: string
  portsPerSlot?: string
  schemaPrefix?: string
}

interface TeardownFlags extends ConnectionFlags, LayoutFlags {
  resource: string
  databaseUrl?: string
  worktree?: boolean
  repo?: string
  killGrace: string
  json?: boolean
}

function addLayoutOptions(cmd: Command): Command {
  return cmd
    .option('--port-base <list>', 'named port bases: slot i gets base + i × ports-per-slot', 'dev=3000,api=4000,db-proxy=5000')
    .option('--ports-per-slot <n>', 'ports in each slot\'s band per name', '10')
    .option('--schema-prefix <prefix>', 'slot i\'s schema is <prefix><i>', 'agent_')
}

function resourceOption(): Option {
  return new Option('--resource <name>', 'the environment pool: slot i is the lease <name>#slot-i').env('LEASEFENCE_ENV_RESOURCE').makeOptionMandatory()
}

function databaseOption(): Option {
  return new Option('--database-url <url>', 'PostgreSQL admin URL (postgres://...)').env('LEASEFENCE_ENV_DATABASE_URL')
}

function parseSlot(value: string | undefined, what = 'slot'): number {
  const n = Number((value ?? '').trim())
  if (value === undefined || value.trim() === '' || !Number.isInteger(n) || n < 0 || n >= 1000) {
    throw new ValidationError(`${what}: "${value ?? ''}" must be a slot index from 0 (or set LEASE_INDEX)`)
  }
  return n
}

function progress(s: Step): void {
  process.stderr.write(`leasefence env: ${s.step}: ${s.action}: ${s.detail}\n`)
}

function teardownSpec(flags: TeardownFlags): TeardownSpec {
  return {
    portBases: flags.portBase,
    portsPerSlot: flags.portsPerSlot,
    schemaPrefix: flags.schemaPrefix,
    database: flags.databaseUrl ? { url: flags.databaseUrl } : undefined,
    worktree: flags.worktree || flags.repo ? { repo: flags.repo } : undefined,
    killGraceMs: parseDuration(flags.killGrace, 'kill-grace'),
    onStep: progress
  }
}

function defaultAgentId(): string {
  return `${hostname()}/${randomUUID().slice(0, 8)}`
}

export function envCommand(): Command {
  const env = new Command('env')
    .description('environment leases: one isolated port band, database schema and git worktree per slot')
    .addHelpText(
      'after',
      `
Slot i of RESOURCE is the lease RESOURCE#slot-i. Acquire leases a free slot and provisions it; the lease
outlives the command (ttl 2h by default): \`leasefence env release\` ends it, \`env renew\` extends it,
\`env reap\` cleans up after holders that crashed.

Example:
  leasefence env acquire --resource ci-box --slots 4 --agent-id "$AGENT" \\
      --database-url "$ADMIN_DATABASE_URL" --template tpl_migrated --worktree --env-out .env.agent
  set -a; . ./.env.agent; set +a
  leasefence env ready --timeout 60s --path /api/health
  leasefence env release --database-url "$ADMIN_DATABASE_URL"`
    )

  // ---- acquire
  const acquire = new Command('acquire')
    .description('lease a free slot and provision its ports, schema, worktree and env file')
    .addOption(resourceOption())
    .requiredOption('--slots <n>', 'how many slots (parallel environments) the pool has')
    .addOption(new Option('--agent-id <id>', 'who holds it (default: host/random); the same id gets its slot back').env('AGENT_ID'))
    .option('--ttl <duration>', 'lease ttl: the lease outlives this command; env release ends it', '2h')
    .addOption(new Option('--on-busy <mode>', 'when every slot is held').choices(['fail', 'wait']).default('fail'))
    .option('--wait-timeout <duration>', 'with --on-busy wait: give up after', '15m')
    .addOption(databaseOption())
    .option('--template <schema>', 'the migrated template schema to clone (with --database-url)')
    .option('--template-data', 'copy the template\'s rows too (reference data, a migrations table)')
    .option('--worktree', 'git worktree add -B agent/<slot> ../wt-agent-<slot> <base-ref>')
    .option('--base-ref <ref>', 'what the worktree starts from', DEFAULT_BASE_REF)
    .option('--repo <dir>', 'the repository (default: the one at the current directory)')
    .option('--env-out <path>', 'write the variables to this env file (mode 0600)')
    .option('--reclaim-ports', 'stop processes already listening on the slot\'s ports (leftovers of a crashed holder)')
    .option('--json', 'print the environment as JSON (default: KEY=value lines)')
  addLayoutOptions(acquire)
  addConnectionOptions(acquire)
  acquire.addHelpText(
    'after',
    `
Prints PORT, API_PORT, DB_PROXY_PORT, DATABASE_URL (with options=-c search_path=agent_<slot>), DB_SCHEMA,
WORKTREE, AGENT_ID, LEASE_INDEX, LEASEFENCE_FENCING_TOKEN (and LEASEFENCE_RESOURCE/OWNER for
\`leasefence publish\`) as KEY=value lines, or as JSON with --json. Exit 1 when every slot is busy.
The env file option is --env-out, not --env-file: Node itself claims --env-file anywhere on its command
line (nodejs/node#54232) and exits before leasefence runs when that file does not exist yet.`
  )
  acquire.action(async (flags: ConnectionFlags & LayoutFlags & Record<string, string | boolean | undefined>) => {
    const slots = Number(flags.slots)
    const ttlMs = parseDuration(String(flags.ttl), 'ttl')
    const waitTimeoutMs = parseDuration(String(flags.waitTimeout), 'wait-timeout')
    if (flags.template && !flags.databaseUrl) throw new ValidationError('template: --template needs --database-url')
    const agentId = (flags.agentId as string | undefined) || defaultAgentId()
    const store = new LeaseStore(connectionFrom(flags))
    try {
      const r = await acquireEnvironment(store, {
        resource: String(flags.resource),
        slots,
        agentId,
        ttlMs,
        onBusy: flags.onBusy === 'wait' ? 'wait' : 'fail',
        waitTimeoutMs,
        portBases: flags.portBase,
        portsPerSlot: flags.portsPerSlot,
        schemaPrefix: flags.schemaPrefix,
        database: flags.databaseUrl
          ? { url: String(flags.databaseUrl), template: flags.template as string | undefined, copyData: !!flags.templateData }
          : undefined,
        worktree: flags.worktree ? { repo: flags.repo as string | undefined, baseRef: String(flags.baseRef) } : undefined,
        envFile: flags.envOut as string | undefined,
        reclaimPorts: !!flags.reclaimPorts,
        onStep: progress
      })
      if (!r.acquired) throw new ValidationError(r.busy)
      const e = r.environment
      for (const w of e.warnings) process.stderr.write(`leasefence env: warning: ${w}\n`)
      if (flags.json) {
        const { steps, clone, ...rest } = e
        process.stdout.write(
          JSON.stringify(
            {
              ...rest,
              clone: clone && { template: clone.template, schema: clone.schema, counts: clone.cloneCounts, notCloned: clone.notCloned },
              steps
            },
            null,
            2
          ) + '\n'
        )
      } else {
        process.stdout.write(formatEnvFile(e.env))
      }
    } finally {
      await store.close()
    }
  })

  // ---- ready
  const ready = new Command('ready')
    .description("wait until the slot's dev port answers HTTP 2xx")
    .addOption(new Option('--slot <i>', 'the slot').env('LEASE_INDEX'))
    .option('--path <path>', 'HTTP path to ask', '/')
    .option('--timeout <duration>', 'give up after', '60s')
    .option('--host <host>', 'ask this host only (default: 127.0.0.1, then ::1)')
  addLayoutOptions(ready)
  ready.action(async (flags: LayoutFlags & { slot?: string; path: string; timeout: string; host?: string }) => {
    const slot = parseSlot(flags.slot)
    const ports = environmentPorts(slot, { portBases: flags.portBase, portsPerSlot: flags.portsPerSlot })
    const r = await waitReady({
      slot,
      port: ports.devPort,
      path: flags.path,
      timeoutMs: parseDuration(flags.timeout, 'timeout'),
      hosts: flags.host ? [flags.host] : undefined
    })
    process.stdout.write(`slot ${slot} ready: ${r.url} answered ${r.status} after ${Math.round(r.waitedMs)}ms\n`)
  })

  // ---- release
  const release = new Command('release')
    .description("tear down the slot's environment (processes on its ports, schema, worktree) and release its lease")
    .addOption(resourceOption())
    .addOption(new Option('--slot <i>', 'the slot').env('LEASE_INDEX'))
    .addOption(new Option('--agent-id <id>', 'the holder').env('AGENT_ID').makeOptionMandatory())
    .option('--token <n>', 'refuse if the slot has been acquired again since this token')
    .addOption(databaseOption())
    .option('--worktree', 'also remove the worktree of the repository at cwd / --repo (normally recorded in the lease)')
    .option('--repo <dir>', 'the repository')
    .option('--kill-grace <duration>', 'SIGTERM, then SIGKILL after', '5s')
    .option('--json', 'print the report as JSON')
  addLayoutOptions(release)
  addConnectionOptions(release)
  release.action(async (flags: TeardownFlags & { slot?: string; agentId: string; token?: string }) => {
    const slot = parseSlot(flags.slot)
    const token = flags.token !== undefined ? validateToken(flags.token) : undefined
    const store = new LeaseStore(connectionFrom(flags))
    try {
      const r = await releaseEnvironment(store, { ...teardownSpec(flags), resource: flags.resource, slot, agentId: flags.agentId, token })
      if (flags.json) process.stdout.write(JSON.stringify(r, null, 2) + '\n')
      else process.stdout.write(`slot ${slot} of ${flags.resource}: torn down, lease ${r.lease}\n`)
    } finally {
      await store.close()
    }
  })

  // ---- reap
  const reap = new Command('reap')
    .description('tear down the environments of slots nobody holds (crashed holders); live slots are never touched')
    .addOption(resourceOption())
    .option('--slots <n>', 'how many slots the pool has (default: every slot lease found)')
    .option('--slot <i>', 'only this slot (refused when it is held live)')
    .option('--expired-only', 'only slots whose lease expired without a release')
    .option('--actor <name>', 'who reaps (default: GITHUB_ACTOR or user@host)')
    .addOption(databaseOption())
    .option('--worktree', 'also remove worktrees of the repository at cwd / --repo (normally recorded in the lease)')
    .option('--repo <dir>', 'the repository')
    .option('--kill-grace <duration>', 'SIGTERM, then SIGKILL after', '5s')
    .option('--json', 'print the report as JSON')
  addLayoutOptions(reap)
  addConnectionOptions(reap)
  reap.action(async (flags: TeardownFlags & { slots?: string; slot?: string; expiredOnly?: boolean; actor?: string }) => {
    const store = new LeaseStore(connectionFrom(flags))
    try {
      const rows = await reapEnvironments(store, {
        ...teardownSpec(flags),
        resource: flags.resource,
        slots: flags.slots !== undefined ? Number(flags.slots) : undefined,
        slot: flags.slot !== undefined ? parseSlot(flags.slot) : undefined,
        expiredOnly: !!flags.expiredOnly,
        actor: operatorActor(flags.actor)
      })
      if (flags.json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n')
      else if (rows.length === 0) process.stdout.write(`no slot leases of ${flags.resource}\n`)
      else for (const r of rows) process.stdout.write(`slot ${r.slot}: ${r.outcome}: ${r.detail}\n`)
      if (rows.some((r) => r.outcome === 'failed')) process.exitCode = 1
    } finally {
      await store.close()
    }
  })

  // ---- renew
  const renew = new Command('renew')
    .description("extend the slot's lease (the holder only)")
    .addOption(resourceOption())
    .addOption(new Option('--slot <i>', 'the slot').env('LEASE_INDEX'))
    .addOption(new Option('--agent-id <id>', 'the holder').env('AGENT_ID').makeOptionMandatory())
    .option('--ttl <duration>', 'new ttl from now', '2h')
  addConnectionOptions(renew)
  renew.action(async (flags: ConnectionFlags & { resource: string; slot?: string; agentId: string; ttl: string }) => {
    const slot = parseSlot(flags.slot)
    const store = new LeaseStore(connectionFrom(flags))
    try {
      const r = await renewEnvironment(store, { resource: flags.resource, slot, agentId: flags.agentId, ttlMs: parseDuration(flags.ttl, 'ttl') })
      process.stdout.write(`slot ${slot} renewed: token ${r.token}, expires ${r.expiresAt.toISOString()}\n`)
    } finally {
      await store.close()
    }
  })

  for (const sub of [acquire, ready, release, reap, renew]) env.addCommand(sub.showHelpAfterError().exitOverride())
  return env
}
