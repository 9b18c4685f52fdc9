import { ValidationError } from './errors'

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/**
 * Parses `500ms`, `30s`, `2m`, `1h`, `1.5s` or bare seconds (`90`) into milliseconds.
 * `what` names the setting in the error message ("ttl", "heartbeat", ...).
 */
export function parseDuration(value: string | number, what: string): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) {
      throw new ValidationError(`${what}: ${value} is not a valid duration; use e.g. 500ms, 30s, 2m, 1h or bare seconds`)
    }
    return Math.round(value * 1000)
  }
  const text = value.trim()
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/i.exec(text)
  if (!match) {
    throw new ValidationError(
      `${what}: "${value}" is not a duration; use a number with a unit (500ms, 30s, 2m, 1h) or bare seconds (90)`
    )
  }
  const amount = Number(match[1])
  const unit = (match[2] ?? 's').toLowerCase()
  return Math.round(amount * UNITS[unit])
}

/** Formats milliseconds for people: 450ms, 30s, 2m30s, 1h5m. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms)
  const sign = ms < 0 ? '-' : ''
  let rest = Math.abs(Math.round(ms))
  if (rest < 1000) return `${sign}${rest}ms`
  if (rest < 60_000) {
    const s = rest / 1000
    return `${sign}${Number.isInteger(s) ? s : s.toFixed(1)}s`
  }
  const h = Math.floor(rest / 3_600_000)
  rest -= h * 3_600_000
  const m = Math.floor(rest / 60_000)
  rest -= m * 60_000
  const s = Math.round(rest / 1000)
  return `${sign}${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}` || '0s'
}
