/**
 * What a chaos run records, as the checker reads it. Every time `t` is in milliseconds on the machine's
 * monotonic clock (process.hrtime in every process: comparable across processes, unaffected by the wall
 * clock skew some workers run with). Server times (the audit trail's commit timestamps) are mapped onto it.
 */

/** One line of a worker's operation log. */
export interface OpEvent {
  t: number
  /** Worker index. */
  w: number
  /** One `leasefence run` invocation (worker + iteration); its owner is `chaos-<run>`. */
  run: string
  ev: OpKind
  token?: number
  [field: string]: unknown
}

export type OpKind =
  | 'run_start' // the worker started `leasefence run` (pid)
  | 'acquired' // leasefence run logged acquire_lock (token, owner)
  | 'step_start' // the command started under the lease (token, owner, workMs)
  | 'step_read' // it read the shared state (base, counter)
  | 'publish_attempt' // it is about to publish (sha)
  | 'publish_done' // the publish ended: outcome acked | refused | failed (sha, code, start)
  | 'step_sigterm' // leasefence run stopped the command (lease lost)
  | 'step_end' // the command ended (code)
  | 'lost_notified' // leasefence run logged lock_lost (reason)
  | 'released' // leasefence run logged release_lock
  | 'release_skipped' // leasefence run logged release_skipped (reason)
  | 'run_exit' // leasefence run ended (code, signal)

export type FaultKind = 'pause-worker' | 'pause-heartbeat' | 'kill' | 'stop' | 'net-delay' | 'net-drop' | 'net-drop-reply' | 'skew'

/** A fault the orchestrator injected. Pauses carry their end (`until`, when SIGCONT was sent). */
export interface FaultEvent {
  t: number
  kind: FaultKind
  w: number
  run?: string
  until?: number
  [field: string]: unknown
}

/** A commit on the remote's main branch (first-parent chain). */
export interface RemoteCommit {
  sha: string
  token?: number
  owner?: string
  run?: string
  counter?: number
}

/** An acquisition as the server recorded it (leases/{id}/audit, written in the same batch as the lease). */
export interface ServerAcquisition {
  token: number
  owner: string
  /** The commit time of the acquisition, mapped to the monotonic clock. */
  t: number
  action: string
  previousOwner: string | null
  previousToken: number
}

export interface ChaosHistory {
  ttlMs: number
  ops: OpEvent[]
  faults: FaultEvent[]
  /** main's first-parent chain, oldest first. */
  mainline: RemoteCommit[]
  /** Every commit reachable from main. */
  reachable: string[]
  /** From the audit trail; empty when it could not be read (the op log's acquire times are used then). */
  acquisitions: ServerAcquisition[]
}
