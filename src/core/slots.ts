import { describeBusy, type BusyInfo } from './acquire'
import { formatDuration } from './duration'
import { LeaseBusyError, ValidationError, WaitTimeoutError } from './errors'
import type { AcquireOptions, Lease, LeaseDoc, LeaseStore } from './lease-store'
import type { OnBusy } from './options'
import { slotResource } from './resource-id'
import { isLive, jitter, systemClock, type Clock } from './time'
import { onChange, Waker } from './watch'

/**
 * N-slot leases: one environment per parallel job. Slot i of `resource` is its own lease document
 * (`resource#slot-i`) with its own fencing counter. Everything derived from a slot (ports, schema) is a
 * pure function of its index, so a restarted job that gets the same slot gets the same values.
 */
export interface SlotLayout {
  portBase: number
  portsPerSlot: number
  schemaPrefix: string
}

export const DEFAULT_SLOT_LAYOUT: SlotLayout = { portBase: 3000, portsPerSlot: 10, schemaPrefix: 'agent_' }

export interface SlotValues {
  slot: number
  port: number
  schema: string
}

const SCHEMA_RE = /^[a-z_][a-z0-9_]*$/

export function validateSlots(slots: number | string): number {
  const n = typeof slots === 'string' ? Number(slots.trim() || '1') : slots
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    throw new ValidationError(`slots: "${slots}" must be a whole number from 1 to 1000`)
  }
  return n
}

export function validateLayout(layout: SlotLayout, slots: number): SlotLayout {
  const { portBase, portsPerSlot, schemaPrefix } = layout
  if (!Number.isInteger(portBase) || portBase < 1 || portBase > 65535) {
    throw new ValidationError(`port-base: "${portBase}" must be a port number (1-65535)`)
  }
  if (!Number.isInteger(portsPerSlot) || portsPerSlot < 1) {
    throw new ValidationError(`ports-per-slot: "${portsPerSlot}" must be a positive whole number`)
  }
  const last = portBase + slots * portsPerSlot - 1
  if (last > 65535) {
    throw new ValidationError(`port-base/ports-per-slot: ${slots} slots would need ports up to ${last}; lower port-base or ports-per-slot`)
  }
  if (!SCHEMA_RE.test(`${schemaPrefix}0`) || schemaPrefix.length > 50) {
    throw new ValidationError(
      `schema-prefix: "${schemaPrefix}" is not a safe schema name prefix; use only lower-case letters, digits and _ (not starting with a digit)`
    )
  }
  return layout
}

/** Ports, schema of slot `i`: deterministic from the index. */
export function slotValues(slot: number, layout: SlotLayout = DEFAULT_SLOT_LAYOUT): SlotValues {
  const schema = `${layout.schemaPrefix}${slot}`
  if (!SCHEMA_RE.test(schema)) throw new ValidationError(`schema: "${schema}" is not a safe schema name`)
  return { slot, port: layout.portBase + slot * layout.portsPerSlot, schema }
}

/** `KEY=value` lines for an env file (values are digits and [a-z0-9_], nothing to quote). */
export function slotEnvLines(v: SlotValues, token: number): string {
  return [`LEASE_SLOT=${v.slot}`, `PORT=${v.port}`, `DB_SCHEMA=${v.schema}`, `LEASEFENCE_FENCING_TOKEN=${token}`].join('\n') + '\n'
}

export interface SlotPolicy extends AcquireOptions {
  onBusy: OnBusy
  waitTimeoutMs?: number
  pollMs?: number
  clock?: Clock
  signal?: AbortSignal
  onWaiting?(busy: BusyInfo[], waitedMs: number): void
  progressEveryMs?: number
}

export type SlotResult =
  /** alreadyHeld: this owner held that slot live before (a restarted job got its own slot back). */
  | { acquired: true; slot: number; lease: Lease; waitedMs: number; alreadyHeld: boolean }
  | { acquired: false; busy: BusyInfo[]; waitedMs: number }

/**
 * Leases any free slot among N. A slot this owner already holds comes first (a restarted job keeps its
 * slot), then free or expired slots by index. Waiting (no FIFO across slots) watches every slot document.
 */
export async function acquireSlot(
  store: LeaseStore,
  resource: string,
  slots: number,
  owner: string,
  policy: SlotPolicy
): Promise<SlotResult> {
  validateSlots(slots)
  const clock = policy.clock ?? systemClock
  const started = clock.monotonic()
  const timeout = policy.waitTimeoutMs ?? 15 * 60_000
  const progressEvery = policy.progressEveryMs ?? 10_000
  let lastProgress = -Infinity
  const wake = new Waker()
  const unsubscribe: (() => void)[] = []
  try {
    for (;;) {
      const busy: BusyInfo[] = []
      const order = await slotOrder(store, resource, slots, owner)
      for (const i of order.indices) {
        const r = await store.acquire(slotResource(resource, i), owner, policy)
        if (r.acquired) {
          return { acquired: true, slot: i, lease: r.lease, waitedMs: clock.monotonic() - started, alreadyHeld: order.heldLive.has(i) }
        }
        busy.push(r)
      }
      const waited = clock.monotonic() - started
      if (policy.onBusy === 'skip') return { acquired: false, busy, waitedMs: waited }
      if (policy.onBusy === 'fail') {
        throw new LeaseBusyError(`all ${slots} slots of "${resource}" are busy: ${busy.map(describeBusy).join('; ')}`)
      }
      if (waited >= timeout || policy.signal?.aborted) {
        throw new WaitTimeoutError(`waited ${formatDuration(waited)} for a free slot of "${resource}" (${slots} slots, all busy)`)
      }
      if (waited - lastProgress >= progressEvery) {
        lastProgress = waited
        policy.onWaiting?.(busy, waited)
      }
      if (unsubscribe.length === 0) {
        for (let i = 0; i < slots; i++) unsubscribe.push(onChange(store.leaseRef(slotResource(resource, i)), () => wake.ring()))
      }
      const soonest = Math.min(...busy.map((b) => b.expiresAt.getTime() - b.serverTime.getTime()))
      const nap = Math.min(jitter(policy.pollMs ?? 5000), Math.max(0, soonest) + 25, timeout - waited)
      await wake.wait(nap, policy.signal)
    }
  } finally {
    for (const u of unsubscribe) u()
  }
}

/**
 * Slot indices to try: the one this owner holds, then free/expired ones, then the rest (by index); and
 * which slots this owner holds live already.
 */
async function slotOrder(
  store: LeaseStore,
  resource: string,
  slots: number,
  owner: string
): Promise<{ indices: number[]; heldLive: Set<number> }> {
  const snaps = await store.db.getAll(...Array.from({ length: slots }, (_, i) => store.leaseRef(slotResource(resource, i))))
  const heldLive = new Set<number>()
  const rank = snaps.map((snap, i) => {
    const d = snap.data() as LeaseDoc | undefined
    if (!isLive(d, snap.readTime)) return { i, r: 1 }
    if (d!.owner === owner) {
      heldLive.add(i)
      return { i, r: 0 }
    }
    return { i, r: 2 }
  })
  return { indices: rank.sort((a, b) => a.r - b.r || a.i - b.i).map((x) => x.i), heldLive }
}
