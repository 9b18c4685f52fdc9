/** Every error leasefence raises on purpose carries a stable `code` so adapters can map it to exit codes. */
export class LeasefenceError extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.code = code
    this.name = new.target.name
  }
}

/** A bad input, found before anything was written. The message says what to change. */
export class ValidationError extends LeasefenceError {
  constructor(message: string) {
    super('invalid_input', message)
  }
}

/** The gate has already seen a newer token: this holder must not publish. */
export class StaleFencingError extends LeasefenceError {
  readonly token: number
  readonly newestToken: number
  readonly newestOwner: string | undefined
  constructor(resource: string, token: number, newestToken: number, newestOwner?: string) {
    super(
      'stale_fencing',
      `fencing token ${token} for "${resource}" is stale: token ${newestToken}` +
        (newestOwner ? ` (owner ${newestOwner})` : '') +
        ' already passed the gate, so this holder must not publish'
    )
    this.token = token
    this.newestToken = newestToken
    this.newestOwner = newestOwner
  }
}

/** The lease no longer shows this owner and token unexpired (taken over, released or expired). */
export class LeaseLostError extends LeasefenceError {
  readonly reason: string
  constructor(resource: string, token: number, reason: string) {
    super('lease_lost', `lease on "${resource}" with token ${token} is lost: ${reason}`)
    this.reason = reason
  }
}

/** Another owner holds a live lease (on-busy: fail). */
export class LeaseBusyError extends LeasefenceError {
  constructor(message: string) {
    super('lease_busy', message)
  }
}

/** on-busy: wait gave up. */
export class WaitTimeoutError extends LeasefenceError {
  constructor(message: string) {
    super('wait_timeout', message)
  }
}

/** Firestore did not give a definite answer (contention or network) within the retry budget. */
export class StoreUnavailableError extends LeasefenceError {
  readonly cause: unknown
  constructor(message: string, cause?: unknown) {
    super('store_unavailable', message)
    this.cause = cause
  }
}

/** True for the refusals a publish must turn into exit code 75. */
export function isFencingRefusal(err: unknown): err is StaleFencingError | LeaseLostError {
  return err instanceof StaleFencingError || err instanceof LeaseLostError
}
