import { describe, expect, it } from 'vitest'
import { checkHistory, ownerOf, pausedWithin } from '../../scripts/chaos/checker'
import type { ChaosHistory, OpEvent, RemoteCommit, ServerAcquisition } from '../../scripts/chaos/history'

// Synthetic histories: the checker must pass clean ones and catch each kind of violation it promises.
const TTL = 1000

function history(p: Partial<ChaosHistory>): ChaosHistory {
  return { ttlMs: TTL, ops: [], faults: [], mainline: [], reachable: [], acquisitions: [], ...p }
}
function acq(token: number, run: string, t: number, prev?: { run: string; released: boolean }): ServerAcquisition {
  return {
    token,
    owner: ownerOf(run),
    t,
    action: !prev ? 'acquire' : prev.released ? 'acquire_after_release' : 'takeover_expired',
    previousOwner: prev ? ownerOf(prev.run) : null,
    previousToken: token - 1
  }
}
function op(run: string, ev: OpEvent['ev'], t: number, fields: Record<string, unknown> = {}): OpEvent {
  return { t, w: Number(/^w(\d+)/.exec(run)?.[1] ?? 0), run, ev, ...fields }
}
/** A run that acquires `token` at t, publishes `sha` over [pubStart, pubDone] and ends at `end`. */
function holder(run: string, token: number, t: number, pub: { sha: string; start: number; done: number; outcome?: string } | undefined, end: number, extra: OpEvent[] = []): OpEvent[] {
  const evs = [op(run, 'run_start', t - 100), op(run, 'acquired', t + 5, { token }), op(run, 'step_start', t + 20, { token })]
  if (pub) {
    evs.push(op(run, 'publish_attempt', pub.start, { token, sha: pub.sha }))
    evs.push(op(run, 'publish_done', pub.done, { token, sha: pub.sha, outcome: pub.outcome ?? 'acked', code: pub.outcome === 'refused' ? 75 : 0, start: pub.start }))
  }
  evs.push(op(run, 'step_end', end, { token, code: 0 }), op(run, 'run_exit', end + 10, { code: 0 }), ...extra)
  return evs
}
const commit = (sha: string, token: number, run: string, counter: number): RemoteCommit => ({ sha, token, owner: ownerOf(run), run, counter })
const root: RemoteCommit = { sha: 'root', counter: 0 }

describe('chaos checker', () => {
  it('passes a clean history of released handovers and takeovers whose holder was told in time', () => {
    const h = history({
      ops: [
        ...holder('w0-r0', 1, 0, { sha: 'a1', start: 300, done: 400 }, 450, [op('w0-r0', 'released', 460, { token: 1 })]),
        ...holder('w1-r0', 2, 480, { sha: 'b1', start: 700, done: 800 }, 5000, [op('w1-r0', 'lost_notified', 2000, { token: 2 })]),
        ...holder('w2-r0', 3, 2100, { sha: 'c1', start: 2300, done: 2400 }, 2500)
      ],
      acquisitions: [acq(1, 'w0-r0', 0), acq(2, 'w1-r0', 480, { run: 'w0-r0', released: true }), acq(3, 'w2-r0', 2100, { run: 'w1-r0', released: false })],
      mainline: [root, commit('a1', 1, 'w0-r0', 1), commit('b1', 2, 'w1-r0', 2), commit('c1', 3, 'w2-r0', 3)],
      reachable: ['root', 'a1', 'b1', 'c1']
    })
    const r = checkHistory(h)
    expect(r.violations).toEqual([])
    expect(r.ok).toBe(true)
    expect(r.stats).toMatchObject({ acquisitions: 3, handovers: 2, takeovers: 1, publishesAcked: 3, commitsOnMain: 3, finalCounter: 3 })
    expect(r.stats.notifyLatencyMs).toEqual([-100])
  })

  it('catches split brain: the old holder publishes after the takeover while the new one publishes too', () => {
    const h = history({
      ops: [
        // w0 stopped renewing (paused heartbeat), never told, published at 2500 after w1 took over at 2000.
        ...holder('w0-r0', 1, 0, { sha: 'a1', start: 2500, done: 2600 }, 2700),
        ...holder('w1-r0', 2, 2000, { sha: 'b1', start: 2200, done: 2300 }, 2400)
      ],
      acquisitions: [acq(1, 'w0-r0', 0), acq(2, 'w1-r0', 2000, { run: 'w0-r0', released: false })],
      mainline: [root, commit('b1', 2, 'w1-r0', 1), commit('a1', 1, 'w0-r0', 2)],
      reachable: ['root', 'b1', 'a1']
    })
    const kinds = checkHistory(h).violations.map((v) => v.kind)
    expect(kinds).toContain('split-brain')
    expect(kinds).toContain('token-order')
    expect(kinds).toContain('lost-not-told')
  })

  it('catches a stale publish even when the new holder published only after the old one stopped', () => {
    const h = history({
      ops: [
        ...holder('w0-r0', 1, 0, { sha: 'a1', start: 2500, done: 2600 }, 2650, [op('w0-r0', 'lost_notified', 2640, { token: 1 })]),
        ...holder('w1-r0', 2, 2000, { sha: 'b1', start: 2900, done: 3000 }, 3100)
      ],
      acquisitions: [acq(1, 'w0-r0', 0), acq(2, 'w1-r0', 2000, { run: 'w0-r0', released: false })],
      mainline: [root, commit('a1', 1, 'w0-r0', 1), commit('b1', 2, 'w1-r0', 2)],
      reachable: ['root', 'a1', 'b1']
    })
    const v = checkHistory(h).violations
    expect(v.map((x) => x.kind)).toEqual(['stale-publish'])
    expect(v[0].tokens).toEqual([1, 2])
  })

  it('does not convict a publish that may have landed before the newer acquisition (gate → push gap)', () => {
    const h = history({
      ops: [
        ...holder('w0-r0', 1, 0, { sha: 'a1', start: 1990, done: 2100 }, 2150, [op('w0-r0', 'lost_notified', 2140, { token: 1 })]),
        ...holder('w1-r0', 2, 2000, { sha: 'b1', start: 2300, done: 2400 }, 2500)
      ],
      acquisitions: [acq(1, 'w0-r0', 0), acq(2, 'w1-r0', 2000, { run: 'w0-r0', released: false })],
      mainline: [root, commit('a1', 1, 'w0-r0', 1), commit('b1', 2, 'w1-r0', 2)],
      reachable: ['root', 'a1', 'b1']
    })
    const r = checkHistory(h)
    expect(r.violations).toEqual([])
    expect(r.stats.ambiguousWindows).toBe(1)
  })

  it('catches an acknowledged publish that main lost (overwritten by a force push)', () => {
    const h = history({
      ops: [...holder('w0-r0', 1, 0, { sha: 'a1', start: 300, done: 400 }, 450), ...holder('w1-r0', 2, 500, { sha: 'b1', start: 700, done: 800 }, 900)],
      acquisitions: [acq(1, 'w0-r0', 0), acq(2, 'w1-r0', 500, { run: 'w0-r0', released: true })],
      // b1 was built on root, not on a1, and pushed with --force.
      mainline: [root, commit('b1', 2, 'w1-r0', 1)],
      reachable: ['root', 'b1']
    })
    const v = checkHistory(h).violations
    expect(v.map((x) => x.kind)).toEqual(['lost-publish'])
    expect(v[0].runs).toEqual(['w0-r0'])
  })

  it('catches a refused publish that landed anyway', () => {
    const h = history({
      ops: holder('w0-r0', 1, 0, { sha: 'a1', start: 300, done: 400, outcome: 'refused' }, 450),
      acquisitions: [acq(1, 'w0-r0', 0)],
      mainline: [root, commit('a1', 1, 'w0-r0', 1)],
      reachable: ['root', 'a1']
    })
    expect(checkHistory(h).violations.map((x) => x.kind)).toEqual(['refused-landed'])
  })

  it('catches one token held by two owners', () => {
    const h = history({
      ops: [...holder('w0-r0', 1, 0, undefined, 100), ...holder('w1-r0', 1, 50, undefined, 150)],
      acquisitions: [acq(1, 'w0-r0', 0), acq(1, 'w1-r0', 50)]
    })
    const kinds = checkHistory(h).violations.map((x) => x.kind)
    expect(kinds.filter((k) => k === 'duplicate-token').length).toBeGreaterThanOrEqual(1)
  })

  it('requires a holder to be told within one ttl of the takeover, not counting time it was stopped', () => {
    const base = (told: number, extra: Partial<ChaosHistory> = {}) =>
      history({
        ops: [
          ...holder('w0-r0', 1, 0, undefined, told + 50, [op('w0-r0', 'lost_notified', told, { token: 1 })]),
          ...holder('w1-r0', 2, 2000, undefined, 2500)
        ],
        acquisitions: [acq(1, 'w0-r0', 0), acq(2, 'w1-r0', 2000, { run: 'w0-r0', released: false })],
        ...extra
      })
    expect(checkHistory(base(2900)).ok).toBe(true) // 900ms after the takeover
    const late = checkHistory(base(3600))
    expect(late.violations.map((v) => v.kind)).toEqual(['lost-not-told'])
    // The same 1600ms, of which 1000ms stopped by SIGSTOP: 600ms of running time.
    const paused = checkHistory(base(3600, { faults: [{ t: 1500, kind: 'pause-heartbeat', w: 0, run: 'w0-r0', until: 3000 }] }))
    expect(paused.ok).toBe(true)
    expect(paused.stats.notifyLatencyMs[0]).toBe(600)
    // Killed before it could be told: exempt.
    const killed = checkHistory(base(9000, { faults: [{ t: 2100, kind: 'kill', w: 0, run: 'w0-r0' }] }))
    expect(killed.ok).toBe(true)
  })

  it('flags a holder whose command ran past the takeover and ended without ever being told', () => {
    const h = history({
      ops: [...holder('w0-r0', 1, 0, undefined, 2300), ...holder('w1-r0', 2, 2000, undefined, 2500)],
      acquisitions: [acq(1, 'w0-r0', 0), acq(2, 'w1-r0', 2000, { run: 'w0-r0', released: false })]
    })
    const v = checkHistory(h).violations
    expect(v.map((x) => x.kind)).toEqual(['lost-not-told'])
    expect(v[0].message).toMatch(/never told/)
  })

  it('exempts a holder that had finished before its lease was taken over', () => {
    const h = history({
      // w0's command ended at 900; its release failed (network), so w1 took the lease over at 2000.
      ops: [...holder('w0-r0', 1, 0, undefined, 900), ...holder('w1-r0', 2, 2000, undefined, 2500)],
      acquisitions: [acq(1, 'w0-r0', 0), acq(2, 'w1-r0', 2000, { run: 'w0-r0', released: false })]
    })
    expect(checkHistory(h).ok).toBe(true)
  })

  it('falls back to the runs\' own acquisition times without an audit trail', () => {
    const h = history({
      ops: [...holder('w0-r0', 1, 0, { sha: 'a1', start: 2500, done: 2600 }, 2700), ...holder('w1-r0', 2, 2000, { sha: 'b1', start: 3000, done: 3100 }, 3200)],
      mainline: [root, commit('a1', 1, 'w0-r0', 1), commit('b1', 2, 'w1-r0', 2)],
      reachable: ['root', 'a1', 'b1']
    })
    expect(checkHistory(h).violations.map((x) => x.kind)).toEqual(['stale-publish'])
  })

  it('adds up stopped time inside a window', () => {
    expect(pausedWithin([{ from: 0, to: 100 }, { from: 150, to: 300 }], 50, 200)).toBe(100)
    expect(pausedWithin([{ from: 0, to: Infinity }], 10, 20)).toBe(10)
  })
})
