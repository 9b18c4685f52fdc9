/**
 * Repro of a liveness finding of the chaos suite (see SAFETY.md, "Findings"): the gate's transaction
 * reads the lease document, and on the emulator (as with Firestore's default pessimistic concurrency)
 * that read takes a lock which stalls every non-transactional write of the lease document (the holder's
 * own renewals, other callers' acquisitions) until the transaction ends, or for ~60 s when the
 * publishing process died inside it.
 *
 *   npx tsx scripts/chaos/gate-lock-repro.ts
 *
 * Uses FIRESTORE_EMULATOR_HOST, or starts an emulator.
 */
import { spawn } from 'node:child_process'
import { LeaseStore } from '../../src/core/lease-store'
import { startEmulator } from '../../test/support/emulator'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function main(): Promise<void> {
  const emu = process.env.FIRESTORE_EMULATOR_HOST ? undefined : await startEmulator()
  if (emu) process.env.FIRESTORE_EMULATOR_HOST = emu.host
  process.env.METADATA_SERVER_DETECTION = 'none'
  const projectId = `gate-lock-${Date.now()}`
  const holder = new LeaseStore({ projectId })
  const publisher = new LeaseStore({ projectId })
  const got = await holder.acquire('repro', 'holder', { ttlMs: 3000 })
  if (!got.acquired) throw new Error('not acquired')
  const token = got.lease.token

  // 1. A fenced write that takes 2 s inside the gate's transaction: the holder's renewal waits for it.
  const tx = publisher.fencedTransaction('repro', 'holder', token, async () => sleep(2000))
  await sleep(300)
  let t = performance.now()
  const r1 = await holder.renew('repro', 'holder', token, 3000)
  console.log(`1. renewal during a 2 s fenced transaction took ${Math.round(performance.now() - t)} ms (renewed: ${r1.renewed})`)
  await tx

  // 2. A publisher killed inside the gate's transaction (after its read, before its commit).
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', `
    const { LeaseStore } = require(${JSON.stringify(require.resolve('../../src/core/lease-store'))})
    const s = new LeaseStore({ projectId: ${JSON.stringify(projectId)} })
    s.fencedTransaction('repro', 'holder', ${token}, async () => { console.log('inside'); await new Promise(() => {}) })
  `], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env })
  await new Promise<void>((r) => child.stdout!.on('data', (d) => String(d).includes('inside') && r()))
  child.kill('SIGKILL')
  t = performance.now()
  const r2 = await holder.renew('repro', 'holder', token, 3000)
  console.log(`2. renewal after a publisher died inside the gate took ${Math.round(performance.now() - t)} ms (renewed: ${r2.renewed}); ttl was 3000 ms`)
  console.log('   (with a 3 s ttl the heartbeat declares the lease lost long before that, and nobody can acquire it meanwhile)')
  await Promise.all([holder.close(), publisher.close()])
  await emu?.stop()
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
