import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { ValidationError } from '../core/errors'

/**
 * The environment file of a slot and the per-slot DATABASE_URL.
 */

/**
 * The slot's DATABASE_URL: the given URL with `options=-c search_path=<schema>` added to its query,
 * percent-encoded (`options=-c%20search_path%3Dagent_0`) so that both libpq (psql, most drivers) and
 * node-postgres read it; `+` would not do, libpq does not decode it to a space. An `options` parameter
 * already in the URL is kept and the search_path appended to it. Everything else is left byte for byte.
 */
export function withSearchPath(url: string, schema: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new ValidationError(`schema: "${schema}" is not a safe schema name`)
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new ValidationError('database-url: use a postgres:// or postgresql:// URL')
  }
  const hashAt = url.indexOf('#')
  const fragment = hashAt >= 0 ? url.slice(hashAt) : ''
  const base = hashAt >= 0 ? url.slice(0, hashAt) : url
  const qAt = base.indexOf('?')
  const head = qAt >= 0 ? base.slice(0, qAt) : base
  const params = qAt >= 0 ? base.slice(qAt + 1).split('&').filter(Boolean) : []
  const setting = `-c search_path=${schema}`
  let found = false
  const out = params.map((p) => {
    const eq = p.indexOf('=')
    const key = eq >= 0 ? p.slice(0, eq) : p
    if (decodeComponent(key) !== 'options') return p
    found = true
    const old = eq >= 0 ? decodeComponent(p.slice(eq + 1)) : ''
    // A search_path set there before is replaced: ours has to win.
    const kept = old.replace(/(^|\s)-c\s*search_path=\S*/g, '').trim()
    return `options=${encodeURIComponent(kept ? `${kept} ${setting}` : setting)}`
  })
  if (!found) out.push(`options=${encodeURIComponent(setting)}`)
  return `${head}?${out.join('&')}${fragment}`
}

function decodeComponent(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '))
  } catch {
    return s
  }
}

/** The URL without its password, for logs and lease metadata. */
export function redactUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/?#@]*):[^@/?#]*@/i, '$1:***@')
}

/** Quotes a value for a KEY=value line that both `sh` (`set -a; . file`) and dotenv read the same. */
export function envValue(value: string): string {
  if (/[\n\r\0]/.test(value)) throw new ValidationError('env-file: values cannot contain line breaks')
  if (/^[A-Za-z0-9_./:@%+=,-]*$/.test(value)) return value
  if (value.includes("'")) {
    throw new ValidationError(`env-file: the value ${JSON.stringify(value)} contains a single quote; percent-encode it (%27)`)
  }
  return `'${value}'`
}

export function formatEnvFile(vars: Record<string, string>): string {
  return Object.entries(vars).map(([k, v]) => `${k}=${envValue(v)}`).join('\n') + '\n'
}

/** Writes the file atomically (temp file + rename), mode 0600: it may carry a database password. */
export function writeEnvFile(path: string, vars: Record<string, string>): string {
  const file = resolve(path)
  mkdirSync(dirname(file), { recursive: true })
  const tmp = `${file}.tmp-${process.pid}`
  writeFileSync(tmp, formatEnvFile(vars), { mode: 0o600 })
  chmodSync(tmp, 0o600)
  renameSync(tmp, file)
  return file
}

/** Reads KEY=value lines as written by formatEnvFile (single-quoted values unquoted). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim())
    if (!m) continue
    const v = m[2]
    out[m[1]] = v.length >= 2 && v.startsWith("'") && v.endsWith("'") ? v.slice(1, -1) : v
  }
  return out
}
