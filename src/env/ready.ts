import { LeasefenceError, ValidationError } from '../core/errors'
import { formatDuration } from '../core/duration'

/** The slot's dev server did not answer 2xx in time. */
export class NotReadyError extends LeasefenceError {
  constructor(message: string) {
    super('env_not_ready', message)
  }
}

export interface ReadyOptions {
  slot: number
  port: number
  /** HTTP path to ask (default /). */
  path?: string
  /** Hosts to try; the first that answers 2xx wins. Default 127.0.0.1 and ::1. */
  hosts?: string[]
  timeoutMs?: number
  /** Per request. */
  requestTimeoutMs?: number
  pollMs?: number
  signal?: AbortSignal
}

export interface ReadyResult {
  url: string
  status: number
  waitedMs: number
  attempts: number
}

function urlFor(host: string, port: number, path: string): string {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  return `http://${h}:${port}${path}`
}

/**
 * Polls http://<host>:<port><path> until it answers 2xx. Fails with NotReadyError naming the slot, the
 * port and the last thing seen (connection refused, HTTP 503, ...).
 */
export async function waitReady(opts: ReadyOptions): Promise<ReadyResult> {
  const path = opts.path ?? '/'
  if (!path.startsWith('/') || /\s/.test(path)) throw new ValidationError(`path: "${path}" must start with / (e.g. /api/health)`)
  if (!Number.isInteger(opts.port) || opts.port < 1 || opts.port > 65535) throw new ValidationError(`port: ${opts.port} is not a port`)
  const hosts = opts.hosts?.length ? opts.hosts : ['127.0.0.1', '::1']
  const timeout = opts.timeoutMs ?? 60_000
  const poll = opts.pollMs ?? 250
  const started = performance.now()
  let attempts = 0
  let last = 'no answer yet'
  for (;;) {
    for (const host of hosts) {
      const url = urlFor(host, opts.port, path)
      attempts++
      const left = timeout - (performance.now() - started)
      try {
        const res = await fetch(url, {
          signal: AbortSignal.timeout(Math.max(100, Math.min(opts.requestTimeoutMs ?? 2000, left))),
          redirect: 'manual'
        })
        await res.body?.cancel().catch(() => undefined)
        if (res.status >= 200 && res.status < 300) {
          return { url, status: res.status, waitedMs: performance.now() - started, attempts }
        }
        last = `HTTP ${res.status} from ${url}`
      } catch (err) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause
        // Prefer what the IPv4 probe said: "refused on ::1" hides nothing useful when v4 said more.
        if (host === hosts[0] || last === 'no answer yet') last = `${cause?.code ?? cause?.message ?? (err as Error).message} (${url})`
      }
    }
    const waited = performance.now() - started
    if (waited >= timeout || opts.signal?.aborted) {
      throw new NotReadyError(
        `slot ${opts.slot}: nothing answered HTTP 2xx on port ${opts.port} (path ${path}) within ${formatDuration(timeout)}; last: ${last}`
      )
    }
    await new Promise((r) => setTimeout(r, Math.min(poll, Math.max(0, timeout - waited))))
  }
}
