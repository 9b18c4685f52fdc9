import { mkdtempSync, rmSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { Command, Option } from 'commander'
import { describeBusy } from '../core/acquire'
import { acquireLease } from '../core/acquisition'
import { planAcquire } from '../core/dry-run'
import { DISABLED_BANNER, runMode } from '../core/modes'
import { parseDuration } from '../core/duration'
import { Heartbeat } from '../core/heartbeat'
import { LeaseStore } from '../core/lease-store'
import { appendAudit } from '../core/operations'
import { STATE_DIR_ENV, writeLostMarker } from '../core/local-state'
import { logEvent } from '../core/log'
import { parseOnBusy, parseQueueMode, parseTimings, validateOwner, validateResource } from '../core/options'
import { EXIT_FENCED } from '../core/publish'
import { withTimeout } from '../core/time'
import { ValidationError } from '../core/errors'
import { onTerminationSignals, runChild, signalExitCode } from './child'
import { addConnectionOptions, connectionEnv, connectionFrom, type ConnectionFlags } from './settings'

interface RunFlags extends ConnectionFlags {
  resource: string
  ttl: string
  heartbeat?: string
  onBusy: string
  waitTimeout: string
  owner?: string
  killGrace: string
  queue: string
  stuckThreshold: string
  maxHold?: string
}

export function defaultOwner(): string {
  return `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`
}

export function runCommand(): Command {
  const cmd = new Command('run')
    .description('acquire a lease, run CMD while a heartbeat keeps it, release when CMD ends')
    .requiredOption('--resource <name>', 'what to lock (any string)')
    .option('--ttl <duration>', 'lease time to live (500ms, 30s, 2m, 1h or bare seconds)', '90s')
    .option('--heartbeat <duration>', 'renewal period, at most ttl/3 (default ttl/3)')
    .addOption(new Option('--on-busy <mode>', 'when another owner holds it (supersede: wait, cancelling older waiters)').choices(['skip', 'wait', 'fail', 'supersede']).default('skip'))
    .option('--wait-timeout <duration>', 'with --on-busy wait: give up after', '15m')
    .addOption(new Option('--queue <mode>', 'waiters take FIFO tickets, or race').choices(['fifo', 'none']).default('fifo'))
    .option('--stuck-threshold <n>', 'warn (lock_stuck) after this many skips against one holder; 0 = never', '10')
    .option('--max-hold <duration>', 'warn (lock_stuck) when one holder has held it longer than this')
    .option('--owner <id>', 'holder identity (default: host/pid/random)')
    .option('--kill-grace <duration>', 'on lease loss: SIGTERM CMD, then SIGKILL after', '10s')
    .argument('<cmd...>', 'the command to run (after --)')
    .addHelpText(
      'after',
      `
CMD gets LEASEFENCE_RESOURCE, LEASEFENCE_OWNER and LEASEFENCE_FENCING_TOKEN in its environment.
Exit codes: CMD's own; 0 when skipped (or superseded by a newer waiter); 1 when busy with --on-busy fail
or the wait timed out; 75 when the lease was lost while CMD ran (CMD was terminated).
LEASEFENCE_DRY_RUN=1: read only, say what would happen, run CMD without a lease.
LEASEFENCE_DISABLED=1: run CMD with no lease at all (emergency switch), said loudly.

Example:
  leasefence run --resource my-org/site --ttl 60s -- ./generate.sh`
    )
  addConnectionOptions(cmd)
  cmd.action(async (argv: string[], flags: RunFlags) => {
    process.exitCode = await run(argv, flags)
  })
  return cmd
}

async function run(argv: string[], flags: RunFlags): Promise<number> {
  // Everything is validated before anything is written.
  validateResource(flags.resource)
  const timings = parseTimings(flags.ttl, flags.heartbeat)
  const onBusy = parseOnBusy(flags.onBusy)
  const waitTimeoutMs = parseDuration(flags.waitTimeout, 'wait-timeout')
  const graceMs = parseDuration(flags.killGrace, 'kill-grace')
  const queue = parseQueueMode(flags.queue)
  const stuckThreshold = Number(flags.stuckThreshold)
  if (!Number.isInteger(stuckThreshold) || stuckThreshold < 0) {
    throw new ValidationError(`stuck-threshold: "${flags.stuckThreshold}" must be a whole number (0 = never warn)`)
  }
  const maxHoldMs = flags.maxHold ? parseDuration(flags.maxHold, 'max-hold') : undefined
  const owner = flags.owner ?? defaultOwner()
  validateOwner(owner)
  const mode = runMode(process.env)
  const conn = connectionFrom(flags)
  const childEnv = (token: number, extra: Record<string, string> = {}) => ({
    ...process.env,
    ...connectionEnv(conn),
    LEASEFENCE_RESOURCE: flags.resource,
    LEASEFENCE_OWNER: owner,
    LEASEFENCE_FENCING_TOKEN: String(token),
    ...extra
  })
  if (mode === 'disabled') {
    process.stderr.write(`leasefence: ${DISABLED_BANNER}\n`)
    return runChild(argv[0], argv.slice(1), childEnv(0)).exited
  }
  const store = new LeaseStore(conn)
  if (mode === 'dry-run') {
    try {
      const plan = await planAcquire(store, flags.resource, owner)
      process.stderr.write(`leasefence: ${plan.message}\n`)
      return await runChild(argv[0], argv.slice(1), childEnv(plan.token)).exited
    } finally {
      await store.close()
    }
  }

  const waitAbort = new AbortController()
  let signalled: NodeJS.Signals | undefined
  let uninstall = onTerminationSignals((sig) => {
    signalled = sig
    waitAbort.abort()
  })
  try {
    const got = await acquireLease(store, {
      resource: flags.resource,
      owner,
      ...timings,
      holder: { host: hostname(), pid: String(process.pid), command: argv.join(' ').slice(0, 200) },
      onBusy,
      queue,
      waitTimeoutMs,
      stuckThreshold,
      maxHoldMs,
      signal: waitAbort.signal,
      onWaiting: (busy, waited, position) =>
        logEvent('lock_waiting', { resource: flags.resource, holder: busy.holder, token: busy.token, position, waitedMs: Math.round(waited) })
    })
    if (!got.acquired) {
      logEvent('lock_busy', { resource: flags.resource, holder: got.busy.holder, token: got.busy.token, skipCount: got.skip?.skipCount })
      if (got.stuck) process.stderr.write(`leasefence: warning: the lock looks stuck: ${got.stuck.why}\n`)
      process.stderr.write(
        got.supersededBy
          ? `leasefence: superseded: a newer waiter (${got.supersededBy}) replaced this run; not running the command\n`
          : `leasefence: skipped: ${describeBusy(got.busy)}\n`
      )
      return 0
    }
    const lease = got.lease
    logEvent('acquire_lock', { resource: lease.resource, owner, token: lease.token, waitedMs: Math.round(got.waitedMs), previousOwner: lease.previousOwner })
    if (signalled) {
      await store.release(lease.resource, owner, lease.token)
      return signalExitCode(signalled)
    }
    if (performance.now() >= lease.deadline) {
      // The acquisition took longer than the ttl (a slow or stalled commit): the lease may already be
      // someone else's. Do not start the command on it.
      const reason = `the acquisition was confirmed only after the lease's ttl (${lease.ttlMs}ms) had run out`
      logEvent('lock_lost', { resource: lease.resource, token: lease.token, reason })
      process.stderr.write(`leasefence: lease lost before the command started: ${reason}\n`)
      await store.release(lease.resource, owner, lease.token).catch(() => undefined)
      return EXIT_FENCED
    }

    const stateDir = mkdtempSync(join(tmpdir(), 'leasefence-run-'))
    let lost = false
    const child = runChild(argv[0], argv.slice(1), childEnv(lease.token, { [STATE_DIR_ENV]: stateDir }))
    const hb = new Heartbeat(store, lease, {
      intervalMs: timings.heartbeatMs,
      onRenew: () => undefined,
      onError: (err, n) => logEvent('renew_failed', { resource: lease.resource, token: lease.token, failures: n, error: (err as Error).message }),
      onLost: (reason) => {
        lost = true
        writeLostMarker(stateDir, { reason, at: new Date().toISOString(), token: lease.token })
        logEvent('lock_lost', { resource: lease.resource, token: lease.token, reason })
        appendAudit(store, lease.resource, { action: 'lost', owner, fencing: lease.token, reason }).catch(() => undefined)
        process.stderr.write(`leasefence: lease lost (${reason}); stopping the command\n`)
        child.terminate(graceMs)
      }
    }).start()
    uninstall()
    uninstall = onTerminationSignals((sig) => {
      signalled = sig
      child.child.kill(sig)
    })
    const code = await child.exited
    await hb.stop()
    // Bounded: a release hung on the network must not hold up the exit (the lease expires by its ttl).
    const released = await withTimeout(store.release(lease.resource, owner, lease.token), 10_000, 'the release did not answer within 10s').catch(
      (err: Error) => ({ released: false as const, reason: err.message })
    )
    if (released.released) logEvent('release_lock', { resource: lease.resource, token: lease.token })
    else logEvent('release_skipped', { resource: lease.resource, token: lease.token, reason: released.reason })
    rmSync(stateDir, { recursive: true, force: true })
    if (lost) return EXIT_FENCED
    return code
  } finally {
    uninstall()
    await withTimeout(store.close(), 3000, 'close').catch(() => undefined)
  }
}
