import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * A holder's local state directory (LEASEFENCE_STATE_DIR): how the heartbeat tells later commands of
 * the same job, without a round trip, that the lease is lost, and where gate passes are counted.
 *   lost          written once by the heartbeat when the lease is lost (JSON: reason, at)
 *   events.jsonl  one line per gate pass / refusal, read by the action's post step
 */
export const STATE_DIR_ENV = 'LEASEFENCE_STATE_DIR'

export interface LostMarker {
  reason: string
  at: string
  token: number
}

export function writeLostMarker(dir: string, marker: LostMarker): void {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'lost'), JSON.stringify(marker) + '\n')
}

export function readLostMarker(dir: string | undefined): LostMarker | undefined {
  if (!dir) return undefined
  const p = join(dir, 'lost')
  if (!existsSync(p)) return undefined
  try {
    return JSON.parse(readFileSync(p, 'utf8')) as LostMarker
  } catch {
    return { reason: 'the heartbeat reported the lease lost', at: '', token: 0 }
  }
}

export interface LocalEvent {
  type: 'gate_passed' | 'gate_refused'
  token: number
  at: string
  detail?: string
}

export function appendLocalEvent(dir: string | undefined, e: LocalEvent): void {
  if (!dir) return
  try {
    mkdirSync(dir, { recursive: true })
    appendFileSync(join(dir, 'events.jsonl'), JSON.stringify(e) + '\n')
  } catch {
    // Counting is best effort; the gate's decision does not depend on it.
  }
}

export function readLocalEvents(dir: string | undefined): LocalEvent[] {
  if (!dir) return []
  const p = join(dir, 'events.jsonl')
  if (!existsSync(p)) return []
  return readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as LocalEvent]
      } catch {
        return []
      }
    })
}
