/** Order statistics over repeated trials (nearest-rank percentiles). */
export interface Summary {
  n: number
  median: number
  p95: number
  min: number
  max: number
  mean: number
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]
}

/** The middle value; the mean of the two middle values for an even count. */
export function median(xs: number[]): number {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

export function summarize(xs: number[]): Summary {
  return {
    n: xs.length,
    median: median(xs),
    p95: percentile(xs, 95),
    min: xs.length ? Math.min(...xs) : NaN,
    max: xs.length ? Math.max(...xs) : NaN,
    mean: xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN
  }
}

export function ms(x: number, digits = 0): string {
  if (!Number.isFinite(x)) return '-'
  return x >= 10_000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(digits)} ms`
}

export const now = () => performance.now()
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
export const jitter = (ms: number, f = 0.3) => ms * (1 - f + 2 * f * Math.random())
