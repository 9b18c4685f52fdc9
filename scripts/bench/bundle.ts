import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

/**
 * Sizes of the committed bundle. Every entry file (cli.js, main.js, ...) is a 3-line stub that requires
 * dist/index.js, the one shared ncc bundle; NNN.index.js files are chunks loaded only on demand; proto/
 * and friends are data files the gRPC layer reads at run time.
 */
export interface BundleRow {
  entry: string
  bytes: number
  gzipBytes: number
  note: string
}

function size(p: string): { bytes: number; gzip: number } {
  const buf = readFileSync(p)
  return { bytes: buf.length, gzip: gzipSync(buf, { level: 9 }).length }
}

function dirBytes(dir: string): number {
  let total = 0
  for (const e of readdirSync(dir)) {
    const p = join(dir, e)
    const st = statSync(p)
    total += st.isDirectory() ? dirBytes(p) : st.size
  }
  return total
}

export function bundleSizes(dist: string): BundleRow[] {
  const shared = size(join(dist, 'index.js'))
  const rows: BundleRow[] = []
  for (const entry of ['main.js', 'post.js', 'publish.js', 'heartbeat.js', 'cli.js']) {
    let stub: { bytes: number; gzip: number }
    try {
      stub = size(join(dist, entry))
    } catch {
      continue
    }
    rows.push({ entry, bytes: stub.bytes + shared.bytes, gzipBytes: stub.gzip + shared.gzip, note: `${stub.bytes} B stub + index.js` })
  }
  const chunks = readdirSync(dist).filter((f) => /^\d+\.index\.js$/.test(f))
  const lazy = chunks.map((c) => size(join(dist, c))).reduce((a, b) => ({ bytes: a.bytes + b.bytes, gzip: a.gzip + b.gzip }), { bytes: 0, gzip: 0 })
  rows.push({ entry: `lazy chunks (${chunks.join(', ')})`, bytes: lazy.bytes, gzipBytes: lazy.gzip, note: 'loaded on demand only' })
  rows.push({ entry: 'dist/ in total', bytes: dirBytes(dist), gzipBytes: NaN, note: 'incl. licenses.txt and the proto/ data files' })
  return rows
}

export function kb(bytes: number): string {
  if (!Number.isFinite(bytes)) return '-'
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`
}
