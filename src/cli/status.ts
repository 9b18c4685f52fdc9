import { Command } from 'commander'
import { formatDuration } from '../core/duration'
import { LeaseStore } from '../core/lease-store'
import { listLeases, type LeaseRow } from '../core/operations'
import { addConnectionOptions, connectionFrom, type ConnectionFlags } from './settings'

interface StatusFlags extends ConnectionFlags {
  json?: boolean
}

export function statusCommand(): Command {
  const cmd = new Command('status')
    .description('who holds what: holder, token, expiry (server time), queue, skips, last gate pass')
    .argument('[resource...]', 'resources to show (default: every lease in the collection)')
    .option('--json', 'machine-readable output')
  addConnectionOptions(cmd)
  cmd.action(async (resources: string[], flags: StatusFlags) => {
    const store = new LeaseStore(connectionFrom(flags))
    try {
      const rows = await listLeases(store, resources)
      if (flags.json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n')
      else process.stdout.write(formatStatusTable(rows) + '\n')
    } finally {
      await store.close()
    }
  })
  return cmd
}

export function formatStatusTable(rows: LeaseRow[], now: Date = new Date()): string {
  if (rows.length === 0) return '(no leases)'
  const head = ['RESOURCE', 'HOLDER', 'TOKEN', 'EXPIRES IN', 'QUEUE', 'SKIPS', 'LAST GATE PASS']
  const body = rows.map((r) => [
    r.resource,
    r.live ? r.owner : r.abandoned ? `(expired, unreleased: ${r.owner})` : `(free; last ${r.owner})`,
    String(r.token),
    r.live ? formatDuration(r.expiresInMs) : '-',
    String(r.queueLength),
    String(r.skipCount),
    r.lastGatePassAt ? `token ${r.gateToken}, ${formatDuration(now.getTime() - r.lastGatePassAt.getTime())} ago` : '-'
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)))
  return [head, ...body].map((row) => row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n')
}
