import { formatDuration } from '../core/duration'
import type { LocalEvent, LostMarker } from '../core/local-state'

/** Everything the post step knows at the end of the job, for the job summary. */
export interface SummaryData {
  resource: string
  owner: string
  token: number
  runUrl?: string
  /** Server time of the acquisition. */
  acquiredAt?: Date
  waitedMs?: number
  heartbeat?: { renewals: number; failures: number; lost: boolean; lostReason?: string }
  /** The lost marker the heartbeat left, if any. */
  lost?: LostMarker
  events: LocalEvent[]
  /** With slots: the slot index. */
  slot?: number
  /** How the lease was taken from its previous owner. */
  takeover?: string
  release:
    | { released: true; at: Date; wasExpired: boolean }
    | { released: false; reason: string; at?: Date; error?: boolean }
}

/** Escapes a value for a markdown table cell. */
export function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/[<>]/g, (c) => (c === '<' ? '&lt;' : '&gt;')).replace(/\r?\n/g, ' ')
}

/** Inline code that survives backticks in the value. */
export function code(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((m) => m.length))
  const fence = '`'.repeat(longest + 1)
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : ''
  return `${fence}${pad}${cell(text)}${pad}${fence}`
}

function time(d: Date | undefined): string {
  return d ? d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-'
}

/** One line for the log and the heading: what became of the lease. */
export function outcomeOf(d: SummaryData): { ok: boolean; text: string } {
  if (d.lost || d.heartbeat?.lost) {
    const why = d.lost?.reason ?? d.heartbeat?.lostReason ?? 'unknown reason'
    return { ok: false, text: `lease lost during the job (${why}); ${d.release.released ? 'released' : 'not released: ' + d.release.reason}` }
  }
  if (d.release.released) return { ok: true, text: d.release.wasExpired ? 'released (it had already expired)' : 'released' }
  return { ok: false, text: `not released: ${d.release.reason}` }
}

/** The job summary as markdown. Pure: the post step writes it with core.summary. */
export function renderSummary(d: SummaryData): string {
  const passes = d.events.filter((e) => e.type === 'gate_passed')
  const refusals = d.events.filter((e) => e.type === 'gate_refused')
  const releasedAt = d.release.at
  const held = d.acquiredAt && releasedAt ? formatDuration(releasedAt.getTime() - d.acquiredAt.getTime()) : '-'
  const outcome = outcomeOf(d)
  const hb = d.heartbeat
  const rows: [string, string][] = [
    ['Resource', code(d.resource)],
    ['Owner', code(d.owner)],
    ['Fencing token', String(d.token)],
    ...(d.slot !== undefined ? ([['Slot', String(d.slot)]] as [string, string][]) : []),
    ...(d.takeover ? ([['Took over', cell(d.takeover)]] as [string, string][]) : []),
    ['Acquired at', time(d.acquiredAt)],
    ['Waited for', d.waitedMs === undefined ? '-' : formatDuration(d.waitedMs)],
    ['Heartbeats', hb ? `${hb.renewals} sent, ${hb.failures} failed` : 'no status (the heartbeat did not report)'],
    ['Gate passes', `${passes.length}${refusals.length ? `, ${refusals.length} refused` : ''}`],
    ['Released at', d.release.released ? time(releasedAt) : '-'],
    ['Held for', held],
    ['Outcome', cell(outcome.text)]
  ]
  const lines = [
    `### leasefence: ${code(d.resource)} ${outcome.ok ? 'held and released' : 'needs attention'}`,
    '',
    '| | |',
    '| --- | --- |',
    ...rows.map(([k, v]) => `| ${k} | ${v} |`)
  ]
  if (d.runUrl) lines.push('', `This job's run: ${d.runUrl}`)
  const notes: string[] = []
  if (d.lost || hb?.lost) {
    notes.push(
      `The lease was lost: ${cell(d.lost?.reason ?? hb?.lostReason ?? 'unknown')}. ` +
        'Later publish steps of this job were refused; another job may have taken over.'
    )
  }
  for (const r of refusals) notes.push(`Gate refused token ${r.token} at ${time(new Date(r.at))}: ${cell(r.detail ?? '')}`)
  if (!d.release.released && !d.release.error && !(d.lost || hb?.lost)) notes.push(`Left the lease untouched: ${cell(d.release.reason)}.`)
  if (!d.release.released && d.release.error) notes.push(`Could not release: ${cell(d.release.reason)}; the lease expires by its ttl.`)
  if (notes.length) lines.push('', ...notes.map((n) => `> [!WARNING]\n> ${n}\n`))
  return lines.join('\n').trimEnd() + '\n'
}

/** The note for a job whose main step did not acquire the lease. */
export function renderSkippedNote(resource: string | undefined, holder: string | undefined): string {
  return `leasefence: the lease${resource ? ` on "${resource}"` : ''} was not acquired by this job${holder ? ` (held by ${holder})` : ''}; nothing to release`
}
