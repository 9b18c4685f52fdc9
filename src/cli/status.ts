import { Command } from 'commander'
import { formatDuration } from '../core/duration'
import { LeaseStore, type LeaseStatus } from '../core/lease-store'
import { addConnectionOptions, connectionFrom, type ConnectionFlags } from './settings'

interface StatusFlags extends ConnectionFlags {
  json?: boolean
}

export function statusCommand(): Command {
  const cmd = new Command('status')
    .description('show who holds each resource, its token and when it expires (server time)')
    .argument('<resource...>', 'resources to show')
    .option('--json', 'machine-readable output')
  addConnectionOptions(cmd)
  cmd.action(async (resources: string[], flags: StatusFlags) => {
    const store = new LeaseStore(connectionFrom(flags))
    try {
      const rows: (LeaseStatus & { gateToken: number })[] = []
      for (const r of resources) {
        const s = await store.status(r)
        const gate = await store.gateStatus(r)
        rows.push({ ...s, gateToken: gate?.fencing ?? 0 })
      }
      if (flags.json) {
        process.stdout.write(JSON.stringify(rows, null, 2) + '\n')
        return
      }
      process.stdout.write(formatStatusTable(rows) + '\n')
    } finally {
      await store.close()
    }
  })
  return cmd
}

export function formatStatusTable(rows: (LeaseStatus & { gateToken: number })[]): string {
  const head = ['RESOURCE', 'HOLDER', 'TOKEN', 'EXPIRES IN', 'GATE TOKEN']
  const body = rows.map((r) => [
    r.resource,
    r.live ? r.owner ?? '' : r.exists ? `(free; last ${r.owner})` : '(never held)',
    String(r.token),
    r.live ? formatDuration(r.remainingMs) : '-',
    String(r.gateToken)
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)))
  return [head, ...body].map((row) => row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n')
}
