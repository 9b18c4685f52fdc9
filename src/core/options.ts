import { parseDuration } from './duration'
import { ValidationError } from './errors'
import { validateResource } from './resource-id'

export const ON_BUSY_MODES = ['skip', 'wait', 'fail', 'supersede'] as const
export type OnBusy = (typeof ON_BUSY_MODES)[number]

export const MIN_TTL_MS = 1000
export const MIN_HEARTBEAT_MS = 250
export const DEFAULT_TTL = '90s'
export const DEFAULT_WAIT_TIMEOUT = '15m'

export interface LeaseTimings {
  ttlMs: number
  heartbeatMs: number
}

/**
 * The timing rules, validated in one place (as client-go's leaderelection does):
 * ttl >= 1s; 250ms <= heartbeat <= ttl/3, so that two renewals can fail before the lease is lost.
 * `heartbeat` defaults to ttl/3.
 */
export function parseTimings(ttl: string | number | undefined, heartbeat?: string | number | undefined): LeaseTimings {
  const ttlMs = parseDuration(ttl === undefined || ttl === '' ? DEFAULT_TTL : ttl, 'ttl')
  if (ttlMs < MIN_TTL_MS) {
    throw new ValidationError(`ttl: ${ttlMs}ms is too short; use at least 1s (the default is ${DEFAULT_TTL})`)
  }
  const heartbeatMs =
    heartbeat === undefined || heartbeat === '' ? Math.floor(ttlMs / 3) : parseDuration(heartbeat, 'heartbeat')
  if (heartbeatMs < MIN_HEARTBEAT_MS) {
    throw new ValidationError(`heartbeat: ${heartbeatMs}ms is too short; use at least ${MIN_HEARTBEAT_MS}ms`)
  }
  if (heartbeatMs * 3 > ttlMs) {
    throw new ValidationError(
      `heartbeat: ${heartbeatMs}ms is more than a third of ttl (${ttlMs}ms); ` +
        `use a heartbeat of at most ${Math.floor(ttlMs / 3)}ms or raise ttl to at least ${heartbeatMs * 3}ms`
    )
  }
  return { ttlMs, heartbeatMs }
}

export function parseOnBusy(value: string | undefined, fallback: OnBusy = 'skip'): OnBusy {
  const v = (value ?? '').trim().toLowerCase()
  if (v === '') return fallback
  if ((ON_BUSY_MODES as readonly string[]).includes(v)) return v as OnBusy
  throw new ValidationError(`on-busy: "${value}" is not a mode; use one of ${ON_BUSY_MODES.join(', ')}`)
}

export const QUEUE_MODES = ['fifo', 'none'] as const
export type QueueMode = (typeof QUEUE_MODES)[number]

export function parseQueueMode(value: string | undefined): QueueMode {
  const v = (value ?? '').trim().toLowerCase()
  if (v === '') return 'fifo'
  if ((QUEUE_MODES as readonly string[]).includes(v)) return v as QueueMode
  throw new ValidationError(`queue: "${value}" is not a queue mode; use fifo or none`)
}

export function validateOwner(owner: string): void {
  if (typeof owner !== 'string' || owner.trim() === '') {
    throw new ValidationError('owner: must be a non-empty string that identifies this holder (e.g. run id + job)')
  }
  if (owner.length > 1024) throw new ValidationError('owner: keep it under 1024 characters')
}

export function validateToken(token: unknown): number {
  const n = typeof token === 'string' ? Number(token.trim()) : token
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new ValidationError(`fencing token: "${String(token)}" is not a positive integer (LEASEFENCE_FENCING_TOKEN)`)
  }
  return n
}

export { validateResource }
