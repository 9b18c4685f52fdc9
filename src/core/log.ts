/**
 * Structured log lines with stable event names, so logs can be searched and dashboards built:
 *   leasefence event=acquire_lock resource="o/r" token=4 owner="..."
 * Adapters choose the sink (stderr for the CLI, core.info for the action).
 */
export type LeaseEvent =
  | 'acquire_lock'
  | 'renew_lock'
  | 'renew_failed'
  | 'lock_lost'
  | 'release_lock'
  | 'release_skipped'
  | 'lock_busy'
  | 'lock_waiting'
  | 'lock_stuck'
  | 'force_release_lock'
  | 'gate_passed'
  | 'gate_refused'

export type LogSink = (line: string) => void

let sink: LogSink = (line) => process.stderr.write(line + '\n')

export function setLogSink(s: LogSink): void {
  sink = s
}

export function formatEvent(event: LeaseEvent, fields: Record<string, unknown> = {}): string {
  const parts = [`leasefence event=${event}`]
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue
    parts.push(`${k}=${typeof v === 'number' || typeof v === 'boolean' ? v : JSON.stringify(v instanceof Date ? v.toISOString() : String(v))}`)
  }
  return parts.join(' ')
}

export function logEvent(event: LeaseEvent, fields: Record<string, unknown> = {}): void {
  sink(formatEvent(event, fields))
}
