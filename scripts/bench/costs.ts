import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { acquireWithPolicy } from '../../src/core/acquire'
import { Heartbeat } from '../../src/core/heartbeat'
import { LeaseStore } from '../../src/core/lease-store'
import { billedReads, emptyCounts, GrpcCounter, roundTrips, type CallCounts } from './grpc-counter'
import { sleep } from './stats'

/**
 * Round trips and billed document reads/writes per operation, counted on the wire by GrpcCounter (an
 * HTTP/2 proxy that decodes the gRPC messages), for the library calls and for the CLI end to end.
 */
export interface CostRow {
  what: string
  calls: Record<string, number>
  roundTrips: number
  reads: number
  writes: number
  note?: string
}

/** Assumed Firestore list prices (USD per 100,000 operations), standard edition. */
export const PRICES = {
  region: 'us-central1 (regional)',
  readsPer100k: 0.03,
  writesPer100k: 0.09,
  multiRegion: 'nam5 (multi-region)',
  readsPer100kMulti: 0.06,
  writesPer100kMulti: 0.18,
  freeReadsPerDay: 50_000,
  freeWritesPerDay: 20_000
}

function row(what: string, c: CallCounts, note?: string, scale = 1): CostRow {
  const calls: Record<string, number> = {}
  for (const [k, v] of Object.entries(c.calls)) calls[k] = round(v * scale)
  return { what, calls, roundTrips: round(roundTrips(c) * scale), reads: round(billedReads(c) * scale), writes: round(c.writes * scale), note }
}
const round = (x: number) => Math.round(x * 10) / 10

function storeAt(host: string, projectId: string): LeaseStore {
  const saved = process.env.FIRESTORE_EMULATOR_HOST
  process.env.FIRESTORE_EMULATOR_HOST = host // read by the Firestore constructor
  try {
    return new LeaseStore({ projectId })
  } finally {
    process.env.FIRESTORE_EMULATOR_HOST = saved
  }
}

async function measure(counter: GrpcCounter, fn: () => Promise<unknown>): Promise<CallCounts> {
  await sleep(50)
  counter.reset()
  await fn()
  await sleep(100) // let streaming answers (listeners) land
  return counter.reset()
}

export async function measureCosts(opts: { emulatorHost: string; projectId: string; dist: string; waitWindowMs: number }): Promise<CostRow[]> {
  const counter = new GrpcCounter(opts.emulatorHost)
  await counter.start()
  const rows: CostRow[] = []
  const counted = storeAt(counter.host, opts.projectId)
  const direct = storeAt(opts.emulatorHost, opts.projectId)
  const stamp = Date.now()
  try {
    await counted.status('bench/warm-up')
    await direct.status('bench/warm-up')
    const r = `bench/cost/${stamp}`
    let token = 0
    rows.push(row('LeaseStore.acquire (free)', await measure(counter, async () => {
      const a = await counted.acquire(r, 'a', { ttlMs: 90_000 })
      if (a.acquired) token = a.lease.token
    })))
    rows.push(row('LeaseStore.renew', await measure(counter, () => counted.renew(r, 'a', token, 90_000))))
    rows.push(row('LeaseStore.passGate (the publish gate)', await measure(counter, () => counted.passGate(r, 'a', token))))
    rows.push(row('LeaseStore.acquire (busy: another owner holds it)', await measure(counter, () => counted.acquire(r, 'b', { ttlMs: 90_000 }))))
    rows.push(row('LeaseStore.release', await measure(counter, () => counted.release(r, 'a', token))))
    const r2 = `bench/cost2/${stamp}`
    rows.push(row('acquireWithPolicy on-busy wait (free; FIFO queue check)', await measure(counter, async () => {
      const a = await acquireWithPolicy(counted, r2, 'a', { ttlMs: 90_000, onBusy: 'wait' })
      if (a.acquired) await direct.release(r2, 'a', a.lease.token)
    }), 'the release is not counted'))

    // A waiting minute: a holder (not counted) renews; the counted waiter waits behind it.
    for (const queue of ['fifo', 'none'] as const) {
      const r3 = `bench/cost-wait-${queue}/${stamp}`
      const ttlMs = 30_000
      const held = await direct.acquire(r3, 'holder', { ttlMs })
      if (!held.acquired) throw new Error('holder did not acquire')
      const hb = new Heartbeat(direct, held.lease, { intervalMs: ttlMs / 3 }).start()
      const abort = new AbortController()
      const c = await measure(counter, async () => {
        const waiting = acquireWithPolicy(counted, r3, 'waiter', { ttlMs, onBusy: 'wait', queue, signal: abort.signal }).catch(() => undefined)
        await sleep(opts.waitWindowMs)
        abort.abort()
        await waiting
      })
      await hb.stop()
      await direct.release(r3, 'holder', held.lease.token)
      rows.push(row(`waiting, queue ${queue}, per minute (holder ttl 30s renews every 10s)`, c, `measured over ${opts.waitWindowMs / 1000}s, scaled to 60s; includes joining/leaving the queue`, 60_000 / opts.waitWindowMs))
    }

    // The CLI end to end, as users run it.
    const cli = join(opts.dist, 'cli.js')
    const env: NodeJS.ProcessEnv = { ...process.env, FIRESTORE_EMULATOR_HOST: counter.host, METADATA_SERVER_DETECTION: 'none', LEASEFENCE_PROJECT: opts.projectId }
    for (const k of Object.keys(env)) if (k.startsWith('GOOGLE_') || k === 'NODE_OPTIONS') delete env[k]
    const r4 = `bench/cost-cli/${stamp}`
    rows.push(row('leasefence run -- leasefence publish -- true (one CLI job, on-busy skip, ttl 90s)', await measure(counter, () => new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [cli, 'run', '--resource', r4, '--', process.execPath, cli, 'publish', '--', 'true'], { env, stdio: 'ignore' })
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`cli exited ${code}`))))
    })), 'acquire, gate, release; the audit records ride in the same commits'))
  } finally {
    await Promise.all([counted.close(), direct.close()])
    await counter.stop()
  }
  return rows
}

/** Cost of holding a lease for an hour and of waiting for one, from the measured rows and PRICES. */
export function hourlyCost(rows: CostRow[], ttlMs = 90_000): { heldHour: { reads: number; writes: number; usd: number; usdMulti: number }; waitingHour: { reads: number; writes: number; usd: number } } {
  const renew = rows.find((r) => r.what === 'LeaseStore.renew')!
  const renewalsPerHour = 3_600_000 / (ttlMs / 3)
  const heldReads = renew.reads * renewalsPerHour
  const heldWrites = renew.writes * renewalsPerHour
  const usd = (reads: number, writes: number, multi = false) =>
    (reads * (multi ? PRICES.readsPer100kMulti : PRICES.readsPer100k) + writes * (multi ? PRICES.writesPer100kMulti : PRICES.writesPer100k)) / 100_000
  const wait = rows.find((r) => r.what.startsWith('waiting, queue fifo')) ?? emptyRow()
  return {
    heldHour: { reads: heldReads, writes: heldWrites, usd: usd(heldReads, heldWrites), usdMulti: usd(heldReads, heldWrites, true) },
    waitingHour: { reads: wait.reads * 60, writes: wait.writes * 60, usd: usd(wait.reads * 60, wait.writes * 60) }
  }
}

function emptyRow(): CostRow {
  return { what: '', calls: emptyCounts().calls, roundTrips: 0, reads: 0, writes: 0 }
}
