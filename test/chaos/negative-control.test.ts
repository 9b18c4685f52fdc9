import { rmSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ALL_FAULTS, PROFILES, runChaos } from '../../scripts/chaos/orchestrator'
import { parseSeed } from '../../scripts/chaos/prng'
import { formatReport } from '../../scripts/chaos/report'

// The negative control: the same workload and faults with the gate turned off (each worker publishes
// with a plain `git push --force`, holding the lease of `leasefence run` but never showing its token to
// anyone). The checker must catch it: a checker that cannot fail proves nothing.
const seed = parseSeed(process.env.LEASEFENCE_CHAOS_SEED ?? '20251130')

describe('chaos: negative control', () => {
  it('catches the violations of the same workload without the gate', async () => {
    const outcome = await runChaos({
      seed,
      ...PROFILES.short,
      durationMs: 25_000,
      faults: ALL_FAULTS,
      publish: 'nogate-force',
      stepOnSigterm: 'wait',
      emulatorHost: process.env.FIRESTORE_EMULATOR_HOST!
    })
    const report = formatReport(outcome)
    console.log(report)
    expect(outcome.result.ok, report).toBe(false)
    const kinds = new Set(outcome.result.violations.map((v) => v.kind))
    // A stale holder published after a newer token was acquired (and, with --force, erased others' work).
    expect([...kinds].some((k) => k === 'stale-publish' || k === 'split-brain'), report).toBe(true)
    // Violations were expected here: no need to keep the records the orchestrator keeps for them.
    rmSync(outcome.workDir, { recursive: true, force: true })
  })
})
