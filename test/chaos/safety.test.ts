import { describe, expect, it } from 'vitest'
import { formatViolations } from '../../scripts/chaos/checker'
import { ALL_FAULTS, PROFILES, runChaos } from '../../scripts/chaos/orchestrator'
import { parseSeed } from '../../scripts/chaos/prng'
import { formatReport } from '../../scripts/chaos/report'

// The short profile of `npm run chaos`: 5 workers looping `leasefence run` (the built CLI) around a
// read-modify-write published with `leasefence publish -- git push`, ~30 s of pauses, kills, network
// faults and skewed clocks. Rerun a failure with LEASEFENCE_CHAOS_SEED=<seed printed below>.
const seed = parseSeed(process.env.LEASEFENCE_CHAOS_SEED ?? '20251130')

describe('chaos: short profile', () => {
  it('finds no safety violation with the gate on, under every kind of fault', async () => {
    const outcome = await runChaos({
      seed,
      ...PROFILES.short,
      faults: ALL_FAULTS,
      publish: 'gate',
      // A step lets its in-flight `leasefence publish` finish when stopped. Forwarding the SIGTERM kills it
      // inside the gate's transaction, which freezes the lease for ~60 s (SAFETY.md, finding 1) and would
      // leave this 30 s run with nothing to check.
      stepOnSigterm: 'wait',
      emulatorHost: process.env.FIRESTORE_EMULATOR_HOST!,
      // A lost reply inside the gate can still freeze the lease for ~60 s (finding 1): then run on, so
      // that there is something to check (rare; the test then takes up to ~90 s).
      minAcquisitions: 4,
      maxDurationMs: 80_000
    })
    const report = formatReport(outcome)
    console.log(report)
    const s = outcome.result.stats
    expect(outcome.result.violations, `seed ${seed}; records in ${outcome.workDir}\n${formatViolations(outcome.result.violations)}`).toEqual([])
    // The run must have done something worth checking.
    expect(s.acquisitions, report).toBeGreaterThanOrEqual(4)
    expect(s.publishAttempts, report).toBeGreaterThanOrEqual(2)
    expect(s.pausesWorker + s.pausesHeartbeat + s.kills + s.netDelays + s.netDrops + s.netDropReplies, report).toBeGreaterThanOrEqual(5)
    expect(s.commitsOnMain).toBe(s.finalCounter)
  })
})
