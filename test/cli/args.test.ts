import { afterAll, describe, expect, test } from 'vitest'
import type { LeaseStore } from '../../src/core/lease-store'
import { makeStore, uniqueProject } from '../support/firestore'
import { topLevelCollections } from '../support/lease-helpers'
import { runCli } from '../support/procs'

const stores: LeaseStore[] = []
afterAll(() => Promise.all(stores.map((s) => s.close())))

/** The subcommands the top-level help lists (so that a new command is covered without editing this). */
function commandsIn(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? ''
  return [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]).filter((c) => c !== 'help')
}

describe('--help', () => {
  test('works for the program and every command', async () => {
    const top = await runCli(['--help'])
    expect(top.code).toBe(0)
    expect(top.stdout).toMatch(/^Usage: leasefence /)
    const commands = commandsIn(top.stdout)
    expect(commands).toEqual(expect.arrayContaining(['run', 'publish', 'status']))
    const results = await Promise.all(commands.map((c) => runCli([c, '--help']).then((r) => ({ c, r }))))
    for (const { c, r } of results) {
      expect(r.code, `${c} --help: ${r.stderr}`).toBe(0)
      expect(r.stdout).toMatch(new RegExp(`^Usage: leasefence ${c} `))
      expect(r.stderr).toBe('')
    }
    const run = results.find((x) => x.c === 'run')!.r.stdout
    expect(run).toContain('--on-busy')
    expect(run).toContain('75 when the lease was lost')
    const publish = results.find((x) => x.c === 'publish')!.r.stdout
    expect(publish).toContain('75 when the gate refused')
    const viaHelp = await runCli(['help', 'publish'])
    expect(viaHelp.code).toBe(0)
    expect(viaHelp.stdout).toMatch(/^Usage: leasefence publish /)
  })
})

describe('bad flags are refused before anything is written', () => {
  const cases: [string, (p: string) => string[], RegExp, number?][] = [
    ['heartbeat above ttl/3', (p) => ['run', '--project', p, '--resource', 'r', '--ttl', '3s', '--heartbeat', '2s', '--', 'true'], /leasefence: heartbeat: 2000ms is more than a third of ttl \(3000ms\); use a heartbeat of at most 1000ms or raise ttl to at least 6000ms/, 1],
    ['heartbeat below 250ms', (p) => ['run', '--project', p, '--resource', 'r', '--heartbeat', '100ms', '--', 'true'], /heartbeat: 100ms is too short; use at least 250ms/, 1],
    ['ttl below 1s', (p) => ['run', '--project', p, '--resource', 'r', '--ttl', '500ms', '--', 'true'], /ttl: 500ms is too short; use at least 1s/, 1],
    ['unknown --on-busy', (p) => ['run', '--project', p, '--resource', 'r', '--on-busy', 'block', '--', 'true'], /argument 'block' is invalid\. Allowed choices are skip, wait, fail/],
    ['bad --ttl', (p) => ['run', '--project', p, '--resource', 'r', '--ttl', 'ninety', '--', 'true'], /ttl: "ninety" is not a duration; use a number with a unit \(500ms, 30s, 2m, 1h\) or bare seconds/, 1],
    ['bad --wait-timeout', (p) => ['run', '--project', p, '--resource', 'r', '--on-busy', 'wait', '--wait-timeout', '5minutes', '--', 'true'], /wait-timeout: "5minutes" is not a duration/, 1],
    ['bad --kill-grace', (p) => ['run', '--project', p, '--resource', 'r', '--kill-grace', 'soon', '--', 'true'], /kill-grace: "soon" is not a duration/, 1],
    ['empty --resource', (p) => ['run', '--project', p, '--resource', '  ', '--', 'true'], /resource: must be a non-empty string/, 1],
    ['missing --resource', (p) => ['run', '--project', p, '--', 'true'], /required option '--resource <name>' not specified/],
    ['missing command', (p) => ['run', '--project', p, '--resource', 'r'], /missing required argument 'cmd'/],
    ['unknown option', (p) => ['run', '--project', p, '--resource', 'r', '--frobnicate', '--', 'true'], /unknown option '--frobnicate'/],
    ['bad collection', (p) => ['run', '--project', p, '--resource', 'r', '--collection', 'a/b', '--', 'true'], /collection: "a\/b" is not a usable collection id/, 1],
    ['publish with a bad token', (p) => ['publish', '--project', p, '--resource', 'r', '--owner', 'o', '--token', 'abc', '--', 'true'], /fencing token: "abc" is not a positive integer/, 1],
    ['publish with token 0', (p) => ['publish', '--project', p, '--resource', 'r', '--owner', 'o', '--token', '0', '--', 'true'], /fencing token: "0" is not a positive integer/, 1],
    ['publish without a lease', (p) => ['publish', '--project', p, '--', 'true'], /publish needs a lease/, 1],
    ['unknown command', () => ['frobnicate'], /unknown command 'frobnicate'/]
  ]

  test.each(cases)('%s: exits non-zero with a clear message, writes nothing', async (_name, args, message, code) => {
    const project = uniqueProject('cli-args')
    const store = makeStore(project)
    stores.push(store)
    const r = await runCli(args(project))
    expect(r.code).not.toBe(0)
    if (code !== undefined) expect(r.code).toBe(code)
    expect(r.stderr).toMatch(message)
    expect(r.stderr).not.toMatch(/\n\s+at /) // a message, not a stack trace
    expect(await topLevelCollections(store.db)).toEqual([])
  })

  test('the command did not run when its flags were bad', async () => {
    const project = uniqueProject('cli-args')
    const r = await runCli(['run', '--project', project, '--resource', 'r', '--ttl', '3s', '--heartbeat', '2s', '--', 'sh', '-c', 'echo RAN'])
    expect(r.code).toBe(1)
    expect(r.stdout).not.toContain('RAN')
    // Control: the same invocation with good flags does run and does write, so the emptiness checks above
    // would have seen a write.
    const store = makeStore(project)
    stores.push(store)
    const ok = await runCli(['run', '--project', project, '--resource', 'r', '--ttl', '3s', '--heartbeat', '1s', '--', 'sh', '-c', 'echo RAN'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.stdout).toContain('RAN')
    expect(await topLevelCollections(store.db)).toContain('leases')
  })
})
