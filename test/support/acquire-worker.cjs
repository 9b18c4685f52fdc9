// A separate OS process that contends for a lease (see test/core/concurrency.test.ts, clock-skew.test.ts).
//
// Env: LF_PROJECT, LF_RESOURCE, LF_OWNER, LF_TTL_MS, and LF_IMPL: the module that exports LeaseStore
// (default: the bundle, dist/index.js, which starts fast; src/core/lease-store.ts when run with tsx).
// It connects, warms its channel up with one read, prints {"ready":true,...}, then for every stdin line
// {"round":N,"at":EPOCH_MS} waits until the wall clock reaches `at` (the "go" signal shared by all
// workers) and calls acquire exactly once, printing one JSON line with the outcome. It exits when stdin
// closes.
'use strict'
const { join } = require('node:path')
const { createInterface } = require('node:readline')

const { LeaseStore } = require(process.env.LF_IMPL || join(__dirname, '../../dist/index.js'))
const project = process.env.LF_PROJECT
const resource = process.env.LF_RESOURCE
const owner = process.env.LF_OWNER
const ttlMs = Number(process.env.LF_TTL_MS || '30000')

function out(v) {
  process.stdout.write(JSON.stringify(v) + '\n')
}

async function untilWall(at) {
  const left = at - Date.now()
  if (left > 5) await new Promise((r) => setTimeout(r, left - 5))
  while (Date.now() < at) {
    // spin the last few ms so that every worker fires as close to `at` as the scheduler allows
  }
}

async function main() {
  const store = new LeaseStore({ projectId: project })
  await store.status(resource)
  out({ ready: true, pid: process.pid, owner, wallNow: Date.now() })
  const rl = createInterface({ input: process.stdin })
  for await (const line of rl) {
    if (!line.trim()) continue
    const cmd = JSON.parse(line)
    await untilWall(cmd.at)
    const firedAt = Date.now()
    try {
      const r = await store.acquire(resource, owner, { ttlMs, holder: { pid: String(process.pid) } })
      if (r.acquired) {
        out({
          round: cmd.round,
          owner,
          acquired: true,
          token: r.lease.token,
          expiresAt: r.lease.expiresAt.getTime(),
          acquiredAt: r.lease.acquiredAt.getTime(),
          firedAt,
          wallNow: Date.now()
        })
      } else {
        out({
          round: cmd.round,
          owner,
          acquired: false,
          holder: r.holder,
          token: r.token,
          expiresAt: r.expiresAt.getTime(),
          serverTime: r.serverTime.getTime(),
          firedAt,
          wallNow: Date.now()
        })
      }
    } catch (err) {
      out({ round: cmd.round, owner, error: String((err && err.stack) || err), firedAt })
    }
  }
  await store.close()
}

main().catch((err) => {
  process.stderr.write(String((err && err.stack) || err) + '\n')
  process.exit(1)
})
