import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { acquireWithPolicy } from '../../src/core/acquire'
import { LeaseStore } from '../../src/core/lease-store'
import { createLockRepo, GitMutex } from './git-mutex'
import { jitter, now, sleep, summarize, type Summary } from './stats'

/**
 * Handover latency and makespan, side by side, for
 *   listener  ours: acquireWithPolicy on-busy wait (FIFO queue; the lease listener wakes the waiter)
 *   queue-none ours: acquireWithPolicy on-busy wait, queue none (still woken by the listener)
 *   polling   ours without the listener: a loop of store.acquire with jittered 1 s polling
 *   git       a git-branch mutex (lock branch in a local bare repository, waiter retries every ~1 s)
 * Every contender has a Firestore client of its own (its own gRPC connection), all in this process.
 */
export type Method = 'listener' | 'queue-none' | 'polling' | 'git'
export const METHODS: Method[] = ['listener', 'queue-none', 'polling', 'git']

const TTL = 60_000

interface Contender {
  lock(resource: string): Promise<void>
  unlock(resource: string): Promise<void>
  close(): Promise<void>
}

async function contenders(method: Method, n: number, projectId: string, workDir: string): Promise<Contender[]> {
  if (method === 'git') {
    const bare = await createLockRepo(join(workDir, 'git'))
    const out: Contender[] = []
    for (let i = 0; i < n; i++) {
      const m = await GitMutex.contender(bare, join(workDir, 'git'), `c${i}`)
      out.push({ lock: (r) => m.lock(gitRef(r)), unlock: (r) => m.unlock(gitRef(r)), close: async () => undefined })
    }
    return out
  }
  const out: Contender[] = []
  for (let i = 0; i < n; i++) {
    const store = new LeaseStore({ projectId })
    await store.status('bench/warm-up') // open the channel before timing anything
    const owner = `c${i}`
    const tokens = new Map<string, number>()
    out.push({
      async lock(resource) {
        if (method === 'polling') {
          for (;;) {
            const r = await store.acquire(resource, owner, { ttlMs: TTL })
            if (r.acquired) {
              tokens.set(resource, r.lease.token)
              return
            }
            await sleep(jitter(1000))
          }
        }
        const r = await acquireWithPolicy(store, resource, owner, {
          ttlMs: TTL,
          onBusy: 'wait',
          queue: method === 'queue-none' ? 'none' : 'fifo',
          waitTimeoutMs: 120_000
        })
        if (!r.acquired) throw new Error(`${owner} did not acquire ${resource}`)
        tokens.set(resource, r.lease.token)
      },
      async unlock(resource) {
        await store.release(resource, owner, tokens.get(resource)!)
      },
      close: () => store.close()
    })
  }
  return out
}

function gitRef(resource: string): string {
  return `lock-${resource.replace(/[^A-Za-z0-9-]/g, '-')}`
}

/** Holder releases → the waiting contender holds: ms from the start of the release to the waiter's return. */
export async function handover(method: Method, trials: number, projectId: string): Promise<Summary & { samples: number[] }> {
  const workDir = mkdtempSync(join(tmpdir(), 'leasefence-bench-'))
  const [holder, waiter] = await contenders(method, 2, projectId, workDir)
  const samples: number[] = []
  try {
    for (let i = 0; i < trials; i++) {
      const resource = `bench/handover/${method}/${i}-${Date.now()}`
      await holder.lock(resource)
      let acquiredAt = 0
      const waiting = waiter.lock(resource).then(() => (acquiredAt = now()))
      // Release at a uniformly random moment of the waiter's first ~1 s poll period.
      await sleep(200 + Math.random() * 1000)
      const t0 = now()
      await holder.unlock(resource)
      await waiting
      samples.push(acquiredAt - t0)
      await waiter.unlock(resource)
    }
  } finally {
    await Promise.all([holder.close(), waiter.close()])
    rmSync(workDir, { recursive: true, force: true })
  }
  return { ...summarize(samples), samples }
}

/** `jobs` contenders start together, each holds the lock `holdMs` once: total time and its ratio to jobs × hold. */
export async function makespan(method: Method, jobs: number, holdMs: number, projectId: string): Promise<{ totalMs: number; ratio: number; perHandoverMs: number }> {
  const workDir = mkdtempSync(join(tmpdir(), 'leasefence-bench-'))
  const cs = await contenders(method, jobs, projectId, workDir)
  const resource = `bench/makespan/${method}/${Date.now()}`
  try {
    const t0 = now()
    await Promise.all(
      cs.map(async (c) => {
        await c.lock(resource)
        await sleep(holdMs)
        await c.unlock(resource)
      })
    )
    const totalMs = now() - t0
    const ideal = jobs * holdMs
    return { totalMs, ratio: totalMs / ideal, perHandoverMs: (totalMs - ideal) / jobs }
  } finally {
    await Promise.all(cs.map((c) => c.close()))
    rmSync(workDir, { recursive: true, force: true })
  }
}
