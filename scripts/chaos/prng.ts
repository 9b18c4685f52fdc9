/**
 * A small seeded PRNG (mulberry32) so that every decision of the chaos run (who is paused, when, for how
 * long; which connection loses its reply; which worker's clock is skewed) follows from `--seed`.
 * Separate streams (`fork`) keep one kind of decision from shifting another when a profile changes.
 */
export class Prng {
  private state: number

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** Uniform in [lo, hi). */
  float(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next()
  }

  /** Integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1))
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list')
    return items[Math.floor(this.next() * items.length)]
  }

  /** An independent stream derived from this seed and a label. */
  fork(label: string): Prng {
    let h = this.state ^ 0x811c9dc5
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193)
    return new Prng(h >>> 0)
  }
}

/** Parses a seed flag: a number, or any string hashed to one. */
export function parseSeed(value: string | number | undefined): number {
  if (value === undefined || value === '') return (Date.now() ^ (process.pid << 8)) >>> 0
  const n = Number(value)
  if (Number.isSafeInteger(n) && n >= 0) return n >>> 0
  let h = 0x811c9dc5
  const s = String(value)
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return h >>> 0
}
