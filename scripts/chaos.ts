/**
 * `npm run chaos`: the safety suite. Workers repeatedly run `leasefence run` (dist/cli.js) around a
 * read-modify-write of a counter published to a local bare git repository, while a seeded nemesis pauses,
 * kills, cuts off and clock-skews them; then the checker reads the remote's history and the operation logs.
 *
 *   npm run chaos -- [--profile short|long] [--seed N] [--workers N] [--duration 60s] [--ttl 1500ms]
 *                    [--heartbeat 500ms] [--fault-every 2s] [--faults pause-worker,pause-heartbeat,kill,net,skew]
 *                    [--publish gate|gate-force|nogate-force|nogate] [--step-sigterm forward|wait]
 *                    [--negative-control] [--keep] [--json]
 *
 * --negative-control runs the same workload with the gate turned off (plain `git push --force`) and
 * succeeds only when the checker catches violations. Exit 0: the expectation held; 1: it did not.
 * Uses FIRESTORE_EMULATOR_HOST when set, otherwise starts an emulator of its own.
 */
import { parseDuration } from '../src/core/duration'
import { startEmulator } from '../test/support/emulator'
import { formatViolations } from './chaos/checker'
import { ALL_FAULTS, PROFILES, runChaos, type FaultSwitch, type PublishMode } from './chaos/orchestrator'
import { parseSeed } from './chaos/prng'
import { formatReport } from './chaos/report'

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  if (i < 0) return undefined
  const v = process.argv[i + 1]
  return v === undefined || v.startsWith('--') ? '' : v
}
const has = (name: string) => process.argv.includes(`--${name}`)

async function main(): Promise<number> {
  const profileName = (flag('profile') || 'short') as keyof typeof PROFILES
  const profile = PROFILES[profileName]
  if (!profile) throw new Error(`--profile: use ${Object.keys(PROFILES).join(' or ')}`)
  const negative = has('negative-control')
  const seed = parseSeed(flag('seed'))
  const faults = (flag('faults') ?? ALL_FAULTS.join(',')).split(',').map((s) => s.trim()).filter(Boolean) as FaultSwitch[]
  for (const f of faults) if (!ALL_FAULTS.includes(f)) throw new Error(`--faults: unknown fault ${f}; use ${ALL_FAULTS.join(',')}`)
  const publish = (flag('publish') || (negative ? 'nogate-force' : 'gate')) as PublishMode
  let emulatorHost = process.env.FIRESTORE_EMULATOR_HOST
  let stop: (() => Promise<void>) | undefined
  if (!emulatorHost) {
    process.stderr.write('chaos: starting a Firestore emulator\n')
    const emu = await startEmulator()
    emulatorHost = emu.host
    stop = emu.stop
  }
  try {
    const outcome = await runChaos({
      seed,
      workers: Number(flag('workers') || profile.workers),
      durationMs: flag('duration') ? parseDuration(flag('duration')!, 'duration') : profile.durationMs,
      ttlMs: flag('ttl') ? parseDuration(flag('ttl')!, 'ttl') : profile.ttlMs,
      heartbeatMs: flag('heartbeat') ? parseDuration(flag('heartbeat')!, 'heartbeat') : profile.heartbeatMs,
      faultEveryMs: flag('fault-every') ? parseDuration(flag('fault-every')!, 'fault-every') : profile.faultEveryMs,
      faults,
      publish,
      stepOnSigterm: flag('step-sigterm') === 'wait' ? 'wait' : 'forward',
      emulatorHost,
      keepWorkDir: has('keep'),
      log: (line) => process.stderr.write(line + '\n')
    })
    if (has('json')) process.stdout.write(JSON.stringify({ options: outcome.options, result: outcome.result, proxy: outcome.proxy }, null, 2) + '\n')
    else process.stdout.write(formatReport(outcome) + '\n')
    const caught = !outcome.result.ok
    if (negative) {
      process.stdout.write(caught ? '\nnegative control: the checker caught the ungated workload, as it must\n' : '\nnegative control FAILED: no violation was detected without the gate\n')
      return caught ? 0 : 1
    }
    if (caught) process.stdout.write(`\nVIOLATIONS:\n${formatViolations(outcome.result.violations)}\nrecords kept in ${outcome.workDir}\n`)
    return caught ? 1 : 0
  } finally {
    await stop?.()
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`chaos: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
    process.exit(2)
  }
)
