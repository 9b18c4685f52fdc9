/**
 * `npm run bench`: leasefence next to its alternatives, in one run on one machine, against the Firestore
 * emulator (FIRESTORE_EMULATOR_HOST, or one started here). Prints a Markdown report; `--write` also puts
 * it into BENCHMARKS.md between the `bench:results` markers; `--quick` runs fewer trials (a smoke test).
 *
 *   npm run bench [-- --write] [-- --quick] [-- --only handover,makespan,cold,costs,bundle]
 *
 * Sections: handover latency (listener / polling / git-branch mutex), makespan of 10 jobs × 2 s, cold
 * start of the committed bundle, round trips and billed reads/writes per operation (counted on the wire),
 * bundle sizes. Raw results go to .tmp/bench/latest.json; `--from FILE` renders saved results again.
 */
import { cpus, freemem, loadavg, totalmem } from 'node:os'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomUUID } from 'node:crypto'
import { startEmulator } from '../test/support/emulator'
import { bundleSizes, kb, type BundleRow } from './bench/bundle'
import { coldStarts, type ColdStart } from './bench/cold-start'
import { handover, makespan, type Method } from './bench/coordination'
import { hourlyCost, measureCosts, PRICES, type CostRow } from './bench/costs'
import { ms, summarize, type Summary } from './bench/stats'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const DIST = join(ROOT, 'dist')
const args = process.argv.slice(2)
const quick = args.includes('--quick')
const onlyArg = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined
const only = new Set((onlyArg ?? 'handover,makespan,cold,costs,bundle').split(','))

const log = (s: string) => process.stderr.write(`bench: ${s}\n`)

interface Results {
  machine: Record<string, string | number>
  handover: { method: Method; label: string; summary: Summary }[]
  makespan: { method: Method; label: string; runs: { totalMs: number; ratio: number; perHandoverMs: number }[] }[]
  cold: ColdStart[]
  costs: CostRow[]
  bundle: BundleRow[]
  elapsedS: number
}

const LABELS: Record<Method, string> = {
  listener: 'leasefence, listener (on-busy wait, FIFO queue)',
  'queue-none': 'leasefence, listener (on-busy wait, queue none)',
  polling: 'leasefence, polling only (store.acquire every 1 s ± 30%)',
  git: 'git-branch mutex (push a lock branch; retry every 1 s ± 30%)'
}

async function main(): Promise<void> {
  if (args.includes('--from')) {
    // Re-render saved results (e.g. after a change to the report), without measuring again.
    const res = JSON.parse(readFileSync(resolve(args[args.indexOf('--from') + 1]), 'utf8')) as Results
    return output(res)
  }
  const t0 = performance.now()
  let emulatorHost = process.env.FIRESTORE_EMULATOR_HOST
  let stop: (() => Promise<void>) | undefined
  if (!emulatorHost) {
    log('starting a Firestore emulator')
    const emu = await startEmulator()
    emulatorHost = emu.host
    stop = emu.stop
    process.env.FIRESTORE_EMULATOR_HOST = emulatorHost
  }
  process.env.METADATA_SERVER_DETECTION = 'none'
  const projectId = `bench-${randomUUID().slice(0, 8)}`
  const cpu = cpus()
  const res: Results = {
    machine: {
      nproc: cpu.length,
      cpu: cpu[0]?.model ?? 'unknown',
      memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} GiB free at start)`,
      node: process.version,
      loadAtStart: loadavg().map((x) => x.toFixed(2)).join(' '),
      date: new Date().toISOString()
    },
    handover: [],
    makespan: [],
    cold: [],
    costs: [],
    bundle: [],
    elapsedS: 0
  }
  try {
    if (only.has('handover')) {
      const trials = { listener: quick ? 5 : 25, 'queue-none': quick ? 5 : 15, polling: quick ? 5 : 15, git: quick ? 5 : 15 }
      for (const m of ['listener', 'queue-none', 'polling', 'git'] as Method[]) {
        log(`handover: ${m} × ${trials[m]}`)
        const s = await handover(m, trials[m], projectId)
        res.handover.push({ method: m, label: LABELS[m], summary: s })
      }
    }
    if (only.has('makespan')) {
      const reps = quick ? 1 : 2
      for (const m of ['listener', 'polling', 'git'] as Method[]) {
        const runs = []
        for (let i = 0; i < reps; i++) {
          log(`makespan: ${m} run ${i + 1}/${reps} (10 jobs × 2 s)`)
          runs.push(await makespan(m, 10, 2000, projectId))
        }
        res.makespan.push({ method: m, label: LABELS[m], runs })
      }
    }
    if (only.has('cold')) {
      log('cold start')
      res.cold = await coldStarts({ dist: DIST, emulatorHost, projectId, trials: quick ? 3 : 10 })
    }
    if (only.has('costs')) {
      log('round trips and billed operations')
      res.costs = await measureCosts({ emulatorHost, projectId, dist: DIST, waitWindowMs: quick ? 5000 : 15_000 })
    }
    if (only.has('bundle')) res.bundle = bundleSizes(DIST)
  } finally {
    await stop?.()
  }
  res.machine.loadAtEnd = loadavg().map((x) => x.toFixed(2)).join(' ')
  res.elapsedS = Math.round((performance.now() - t0) / 1000)
  mkdirSync(join(ROOT, '.tmp/bench'), { recursive: true })
  writeFileSync(join(ROOT, '.tmp/bench/latest.json'), JSON.stringify(res, null, 2))
  output(res)
}

function output(res: Results): void {
  const md = render(res)
  process.stdout.write(md + '\n')
  if (args.includes('--write')) {
    const file = join(ROOT, 'BENCHMARKS.md')
    const text = readFileSync(file, 'utf8')
    const begin = '<!-- bench:results:begin -->'
    const end = '<!-- bench:results:end -->'
    const i = text.indexOf(begin)
    const j = text.indexOf(end)
    if (i < 0 || j < i) throw new Error(`BENCHMARKS.md has no ${begin} … ${end} block`)
    writeFileSync(file, text.slice(0, i + begin.length) + '\n' + md + '\n' + text.slice(j))
    log('wrote the results into BENCHMARKS.md')
  }
}

function table(head: string[], rows: (string | number)[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n')
}

function render(r: Results): string {
  const out: string[] = []
  const m = r.machine
  out.push(
    `Run ${m.date}: ${m.nproc} × ${m.cpu}, ${m.memory}, Node ${m.node}; load average ${m.loadAtStart} at the start, ${m.loadAtEnd} at the end; ${r.elapsedS} s in all.`
  )
  if (r.handover.length) {
    out.push('', '#### Handover latency (holder starts releasing → next waiter holds)', '')
    out.push(table(['method', 'trials', 'median', 'p95', 'min', 'max'], r.handover.map((h) => [h.label, h.summary.n, ms(h.summary.median), ms(h.summary.p95), ms(h.summary.min), ms(h.summary.max)])))
  }
  if (r.makespan.length) {
    out.push('', '#### Makespan: 10 jobs, each holding the lock 2 s, all started together (ideal 20 s)', '')
    out.push(table(['method', 'runs', 'total (each run)', 'total / 20 s', 'overhead per job'], r.makespan.map((x) => {
      const s = summarize(x.runs.map((y) => y.totalMs))
      return [x.label, x.runs.length, x.runs.map((y) => ms(y.totalMs)).join(', '), `${(s.median / 20_000).toFixed(3)} (median)`, ms(summarize(x.runs.map((y) => y.perHandoverMs)).median)]
    })))
  }
  if (r.cold.length) {
    out.push('', '#### Cold start (fresh process each trial, one untimed warm-up run first)', '')
    out.push(table(['what', 'trials', 'median', 'p95', 'note'], r.cold.map((c) => [c.name, c.summary.n, ms(c.summary.median), ms(c.summary.p95), c.note ?? ''])))
  }
  if (r.costs.length) {
    out.push('', '#### Round trips and billed operations, counted on the wire', '')
    out.push(table(['operation', 'round trips', 'gRPC calls', 'doc reads', 'doc writes', 'note'], r.costs.map((c) => [
      c.what,
      c.roundTrips,
      Object.entries(c.calls).map(([k, v]) => `${k} ${v}`).join(', '),
      c.reads,
      c.writes,
      c.note ?? ''
    ])))
    const h = hourlyCost(r.costs)
    out.push(
      '',
      `Implied cost (prices assumed: ${PRICES.region} $${PRICES.readsPer100k} per 100k reads, $${PRICES.writesPer100k} per 100k writes; ` +
        `${PRICES.multiRegion} $${PRICES.readsPer100kMulti} / $${PRICES.writesPer100kMulti}; free tier ${PRICES.freeReadsPerDay.toLocaleString('en')} reads and ` +
        `${PRICES.freeWritesPerDay.toLocaleString('en')} writes a day not deducted):`,
      '',
      `- holding a lease for an hour at the default ttl 90 s (a renewal every 30 s): ${Math.round(h.heldHour.reads)} reads + ${Math.round(h.heldHour.writes)} writes = $${h.heldHour.usd.toFixed(6)} ($${h.heldHour.usdMulti.toFixed(6)} multi-region)`,
      `- waiting an hour at the head of the FIFO queue: ${Math.round(h.waitingHour.reads)} reads + ${Math.round(h.waitingHour.writes)} writes = $${h.waitingHour.usd.toFixed(5)}`
    )
  }
  if (r.bundle.length) {
    out.push('', '#### Bundle size of each dist/ entry point (the stub plus the shared dist/index.js it loads)', '')
    out.push(table(['entry', 'bytes', 'gzip -9', 'note'], r.bundle.map((b) => [b.entry, kb(b.bytes), kb(b.gzipBytes), b.note])))
  }
  return out.join('\n')
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
    process.exit(1)
  }
)
