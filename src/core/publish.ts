import { isFencingRefusal, LeaseLostError, type StaleFencingError } from './errors'
import type { GatePass, LeaseStore } from './lease-store'
import { appendLocalEvent, readLostMarker } from './local-state'
import { logEvent } from './log'

/** Exit code of a refused gate or a lost lease (EX_TEMPFAIL): the side effect did not run. */
export const EXIT_FENCED = 75

export interface HolderIdentity {
  resource: string
  owner: string
  token: number
  /** LEASEFENCE_STATE_DIR, where the heartbeat leaves its lost marker. */
  stateDir?: string
}

export type GateOutcome =
  | { passed: true; pass: GatePass }
  | { passed: false; error: StaleFencingError | LeaseLostError; fromMarker: boolean }

/**
 * The check right before a side effect. Refuses at once, without a round trip, when the heartbeat has
 * left its lost marker; otherwise passes the Firestore gate. Infrastructure errors are thrown (the side
 * effect must not run then either, but it is not a fencing refusal).
 */
export async function checkGate(store: Pick<LeaseStore, 'passGate'>, who: HolderIdentity): Promise<GateOutcome> {
  const marker = readLostMarker(who.stateDir)
  if (marker) {
    const error = new LeaseLostError(who.resource, who.token, `the heartbeat reported it lost: ${marker.reason}`)
    record(who, error)
    return { passed: false, error, fromMarker: true }
  }
  try {
    const pass = await store.passGate(who.resource, who.owner, who.token)
    logEvent('gate_passed', { resource: who.resource, token: who.token, owner: who.owner, previous: pass.previousToken })
    appendLocalEvent(who.stateDir, { type: 'gate_passed', token: who.token, at: pass.passedAt.toISOString() })
    return { passed: true, pass }
  } catch (err) {
    if (isFencingRefusal(err)) {
      record(who, err)
      return { passed: false, error: err, fromMarker: false }
    }
    throw err
  }
}

function record(who: HolderIdentity, error: StaleFencingError | LeaseLostError): void {
  logEvent('gate_refused', { resource: who.resource, token: who.token, owner: who.owner, reason: error.message })
  appendLocalEvent(who.stateDir, {
    type: 'gate_refused',
    token: who.token,
    at: new Date().toISOString(),
    detail: error.message
  })
}
