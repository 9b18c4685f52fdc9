import { formatViolations } from './checker'
import type { ChaosOutcome } from './orchestrator'

function pct(xs: number[], p: number): number | undefined {
  if (xs.length === 0) return undefined
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]
}

/** The human summary of a chaos run (also what SAFETY.md quotes). */
export function formatReport(o: ChaosOutcome): string {
  const s = o.result.stats
  const p = o.proxy
  const lat = s.notifyLatencyMs
  const fmt = (x: number | undefined) => (x === undefined ? '-' : `${Math.round(x)}ms`)
  const rows: [string, string | number][] = [
    ['seed', o.options.seed],
    ['workers / duration / ttl / heartbeat', `${o.options.workers} / ${Math.round(o.elapsedMs / 1000)}s / ${o.options.ttlMs}ms / ${o.options.heartbeatMs}ms`],
    ['publish mode / step on SIGTERM', `${o.options.publish} / ${o.options.stepOnSigterm ?? 'forward'}`],
    ['leasefence run invocations', o.runsStarted],
    ['acquisitions (tokens)', s.acquisitions],
    ['handovers (to another owner)', s.handovers],
    ['  of which takeovers of an unreleased lease', s.takeovers],
    ['publish attempts', s.publishAttempts],
    ['  acknowledged', s.publishesAcked],
    ['  refused by the gate (exit 75)', s.publishesRefused],
    ['  failed (git refused / store unavailable / killed)', s.publishesFailed],
    ['commits on main / final counter', `${s.commitsOnMain} / ${s.finalCounter ?? '-'}`],
    ['lease-lost notifications (lock_lost)', s.lostNotified],
    ['commands terminated on loss', s.stepsTerminated],
    ['pauses: whole worker / heartbeat only', `${s.pausesWorker} / ${s.pausesHeartbeat}`],
    ['SIGKILLs mid-run', s.kills],
    ['net faults: delays / dropped connections / drop-reply armed', `${s.netDelays} / ${s.netDrops} / ${s.netDropReplies}`],
    ['proxy: replies dropped / connections cut', p ? `${p.droppedReplies} / ${p.droppedConnections}` : '-'],
    ['workers with a skewed clock (±1h)', s.skewedWorkers],
    ['takeover → old holder told: median / p95 / max', `${fmt(pct(lat, 50))} / ${fmt(pct(lat, 95))} / ${fmt(lat.length ? Math.max(...lat) : undefined)}`],
    ['longest time between two acquisitions (liveness)', fmt(s.longestGapMs)],
    ['acked publishes straddling a newer acquisition (gate→push gap)', s.ambiguousWindows],
    ['violations', o.result.violations.length]
  ]
  const w = Math.max(...rows.map(([k]) => k.length))
  const lines = rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`)
  if (o.result.violations.length) lines.push('', formatViolations(o.result.violations))
  if (o.notes.length) lines.push('', `${o.notes.length} runs ended oddly (first 5):`, ...o.notes.slice(0, 5).map((n) => `  ${n}`))
  return lines.join('\n')
}
