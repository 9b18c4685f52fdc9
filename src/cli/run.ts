import { mkdtempSync, rmSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { Command, Option } from 'commander'
import { acquireWithPolicy, describeBusy } from '../core/acquire'
import { parseDuration } from '../core/duration'
import { Heartbeat } from '../core/heartbeat'
import { LeaseStore } from '../core/lease-store'
import { STATE_DIR_ENV, writeLostMarker } from '../core/local-state'
import { logEvent } from '../core/log'
import { parseOnBusy, parseTimings, validateOwner, validateResource } from '../core/options'
import { EXIT_FENCED } from '../core/publish'
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
    .addOption(new Option('--on-busy <mode>', 'when another owner holds it').choices(['skip', 'wait', 'fail']).default('skip'))
    .option('--wait-timeout <duration>', 'with --on-busy wait: give up after', '15m')
    .option('--owner <id>', 'holder identity (default: host/pid/random)')
    .option('--kill-grace <duration>', 'on lease loss: SIGTERM CMD, then SIGKILL after', '10s')
    .argument('<cmd...>', 'the command to run (after --)')
    .addHelpText(
      'after',
      `
CMD gets LEASEFENCE_RESOURCE, LEASEFENCE_OWNER and LEASEFENCE_FENCING_TOKEN in its environment.
Exit codes: CMD's own; 0 when skipped; 1 when busy with --on-busy fail or wait timed out; 75 when the
lease was lost while CMD ran (CMD was terminated).

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
  const owner = flags.owner ?? defaultOwner()
  validateOwner(owner)
  const conn = connectionFrom(flags)
  const store = new LeaseStore(conn)

  const waitAbort = new AbortController()
  let signalled: NodeJS.Signals | undefined
  let uninstall = onTerminationSignals((sig) => {
    signalled = sig
    waitAbort.abort()
  })
  try {
    const got = await acquireWithPolicy(store, flags.resource, owner, {
      ...timings,
      holder: { host: hostname(), pid: String(process.pid), command: argv.join(' ').slice(0, 200) },
      onBusy,
      waitTimeoutMs,
      signal: waitAbort.signal,
      onWaiting: (busy, waited) => logEvent('lock_waiting', { resource: flags.resource, holder: busy.holder, token: busy.token, waitedMs: Math.round(waited) })
    })
    if (!got.acquired) {
      logEvent('lock_busy', { resource: flags.resource, holder: got.busy.holder, token: got.busy.token })
      process.stderr.write(`leasefence: skipped: ${describeBusy(got.busy)}\n`)
      return 0
    }
    const lease = got.lease
    logEvent('acquire_lock', { resource: lease.resource, owner, token: lease.token, waitedMs: Math.round(got.waitedMs), previousOwner: lease.previousOwner })
    if (signalled) {
      await store.release(lease.resource, owner, lease.token)
      return signalExitCode(signalled)
    }

    const stateDir = mkdtempSync(join(tmpdir(), 'leasefence-run-'))
    let lost = false
    const child = runChild(argv[0], argv.slice(1), {
      ...process.env,
      ...connectionEnv(conn),
      LEASEFENCE_RESOURCE: lease.resource,
      LEASEFENCE_OWNER: owner,
      LEASEFENCE_FENCING_TOKEN: String(lease.token),
      [STATE_DIR_ENV]: stateDir
    })
    const hb = new Heartbeat(store, lease, {
      intervalMs: timings.heartbeatMs,
      onRenew: () => undefined,
      onError: (err, n) => logEvent('renew_failed', { resource: lease.resource, token: lease.token, failures: n, error: (err as Error).message }),
      onLost: (reason) => {
        lost = true
        writeLostMarker(stateDir, { reason, at: new Date().toISOString(), token: lease.token })
        logEvent('lock_lost', { resource: lease.resource, token: lease.token, reason })
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
    const released = await store.release(lease.resource, owner, lease.token).catch((err: Error) => ({ released: false as const, reason: err.message }))
    if (released.released) logEvent('release_lock', { resource: lease.resource, token: lease.token })
    else logEvent('release_skipped', { resource: lease.resource, token: lease.token, reason: released.reason })
    rmSync(stateDir, { recursive: true, force: true })
    if (lost) return EXIT_FENCED
    return code
  } finally {
    uninstall()
    await store.close()
  }
}
