import { acquireWithPolicy, type AcquirePolicy, type BusyInfo } from './acquire'
import { formatDuration } from './duration'
import type { Lease, LeaseStore } from './lease-store'
import { holderRunLiveness, type LivenessOptions, type RunLiveness } from './liveness'
import { logEvent } from './log'
import { recordSkip, type SkipRecord } from './operations'
import { slotResource } from './resource-id'
import { acquireSlot } from './slots'

/**
 * One acquisition as the adapters (action main, `leasefence run`) need it: liveness-aware takeover of a
 * holder whose run is over, the on-busy policy (with FIFO queue or N slots), then skip counting and
 * stuck-lock detection. Adapters only render the outcome.
 */
export interface AcquisitionRequest extends AcquirePolicy {
  resource: string
  owner: string
  /** N-slot leasing when > 1 (each slot its own lease document). */
  slots?: number
  /** Ask the GitHub API whether the holder's run is over (takeover only on a definite "completed"). */
  liveness?: LivenessOptions
  /** Warn (lock_stuck) when this many skips pile up on one holder. Default 10. */
  stuckThreshold?: number
  /** Warn (lock_stuck) when one holder has held the lease longer than this. */
  maxHoldMs?: number
  /** Who is skipping (recorded on the lease). */
  skipper?: string
}

export interface Takeover {
  from: string
  token: number
  why: 'run-completed'
  detail: string
}

export interface Stuck {
  holder: string
  token: number
  skipCount: number
  heldMs: number
  why: string
}

export type AcquisitionOutcome =
  | { acquired: true; lease: Lease; slot?: number; waitedMs: number; takeover?: Takeover; liveness?: RunLiveness }
  | {
      acquired: false
      busy: BusyInfo
      waitedMs: number
      supersededBy?: string
      skip?: SkipRecord
      stuck?: Stuck
      liveness?: RunLiveness
    }

export async function acquireLease(store: LeaseStore, req: AcquisitionRequest): Promise<AcquisitionOutcome> {
  const slots = req.slots ?? 1
  let liveness: RunLiveness | undefined
  if (req.liveness && slots === 1) {
    const s = await store.status(req.resource)
    if (s.live && s.owner && s.owner !== req.owner) {
      liveness = await holderRunLiveness(s.holder, req.liveness)
      if (liveness.state === 'over') {
        const detail = `its run ${liveness.url ?? s.holder.runUrl ?? s.holder.runId} is ${liveness.status} (${liveness.conclusion ?? 'no conclusion'})`
        const r = await store.acquire(req.resource, req.owner, {
          ...req,
          staleHolder: { owner: s.owner, token: s.token, reason: detail }
        })
        if (r.acquired) {
          return {
            acquired: true,
            lease: r.lease,
            waitedMs: 0,
            liveness,
            takeover: { from: s.owner, token: s.token, why: 'run-completed', detail }
          }
        }
      }
    }
  }

  if (slots > 1) {
    const r = await acquireSlot(store, req.resource, slots, req.owner, {
      ...req,
      onBusy: req.onBusy === 'supersede' ? 'wait' : req.onBusy,
      onWaiting: req.onWaiting ? (busy, waited) => req.onWaiting!(busy[0], waited, undefined) : undefined
    })
    if (r.acquired) return { acquired: true, lease: r.lease, slot: r.slot, waitedMs: r.waitedMs }
    const outcome: AcquisitionOutcome = { acquired: false, busy: r.busy[0], waitedMs: r.waitedMs }
    await countSkip(store, req, slotResource(req.resource, 0), outcome)
    return outcome
  }

  const r = await acquireWithPolicy(store, req.resource, req.owner, req)
  if (r.acquired) return { ...r, liveness }
  const outcome: AcquisitionOutcome = { ...r, liveness }
  if (!r.supersededBy) await countSkip(store, req, req.resource, outcome)
  return outcome
}

async function countSkip(
  store: LeaseStore,
  req: AcquisitionRequest,
  resource: string,
  outcome: Extract<AcquisitionOutcome, { acquired: false }>
): Promise<void> {
  let skip: SkipRecord | undefined
  try {
    skip = await recordSkip(store, resource, req.skipper ?? req.owner)
  } catch {
    return // counting is advisory
  }
  if (!skip) return
  outcome.skip = skip
  const threshold = req.stuckThreshold ?? 10
  const reasons: string[] = []
  if (threshold > 0 && skip.skipCount >= threshold) reasons.push(`${skip.skipCount} runs skipped while it held the lease`)
  if (req.maxHoldMs && skip.heldMs > req.maxHoldMs) {
    reasons.push(`held for ${formatDuration(skip.heldMs)}, longer than max-hold ${formatDuration(req.maxHoldMs)}`)
  }
  if (reasons.length) {
    outcome.stuck = { holder: skip.holder, token: skip.token, skipCount: skip.skipCount, heldMs: skip.heldMs, why: reasons.join('; ') }
    logEvent('lock_stuck', {
      resource,
      holder: skip.holder,
      token: skip.token,
      skipCount: skip.skipCount,
      heldMs: skip.heldMs,
      why: outcome.stuck.why
    })
  }
}
