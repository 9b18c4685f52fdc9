import { describe, expect, test } from 'vitest'
import { cell, code, outcomeOf, renderSkippedNote, renderSummary, type SummaryData } from '../../src/action/summary'

const base: SummaryData = {
  resource: 'octo-org/site',
  owner: 'octo-org/site/runs/1/attempts/1/jobs/publish/abcd',
  token: 12,
  runUrl: 'https://github.com/octo-org/site/actions/runs/1/attempts/1',
  acquiredAt: new Date('2026-03-01T10:00:00.000Z'),
  waitedMs: 4200,
  heartbeat: { renewals: 17, failures: 1, lost: false },
  events: [{ type: 'gate_passed', token: 12, at: '2026-03-01T10:01:00.000Z' }],
  release: { released: true, at: new Date('2026-03-01T10:02:05.000Z'), wasExpired: false }
}

function rows(md: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const m of md.matchAll(/^\| ([^|]+?) \| (.*) \|$/gm)) if (m[1] !== '---') out[m[1]] = m[2]
  return out
}

describe('renderSummary', () => {
  test('a lease held and released', () => {
    const md = renderSummary(base)
    expect(md).toMatch(/^### leasefence: `octo-org\/site` held and released\n/)
    expect(rows(md)).toEqual({
      Resource: '`octo-org/site`',
      Owner: '`octo-org/site/runs/1/attempts/1/jobs/publish/abcd`',
      'Fencing token': '12',
      'Acquired at': '2026-03-01 10:00:00Z',
      'Waited for': '4.2s',
      Heartbeats: '17 sent, 1 failed',
      'Gate passes': '1',
      'Released at': '2026-03-01 10:02:05Z',
      'Held for': '2m5s',
      Outcome: 'released'
    })
    expect(md).toContain("This job's run: https://github.com/octo-org/site/actions/runs/1/attempts/1")
    expect(md).not.toContain('[!WARNING]')
  })

  test('a lease lost and taken over: refused gate, left untouched, warnings', () => {
    const d: SummaryData = {
      ...base,
      heartbeat: { renewals: 3, failures: 0, lost: true, lostReason: 'taken over by other with token 13' },
      lost: { reason: 'taken over by other with token 13', at: '2026-03-01T10:01:30.000Z', token: 12 },
      events: [
        { type: 'gate_passed', token: 12, at: '2026-03-01T10:01:00.000Z' },
        { type: 'gate_refused', token: 12, at: '2026-03-01T10:01:40.000Z', detail: 'token 13 already passed | the gate' }
      ],
      release: { released: false, reason: 'now held by other with token 13; left untouched' }
    }
    const md = renderSummary(d)
    expect(md).toMatch(/needs attention/)
    const r = rows(md)
    expect(r['Gate passes']).toBe('1, 1 refused')
    expect(r['Released at']).toBe('-')
    expect(r['Held for']).toBe('-')
    expect(r.Outcome).toMatch(/^lease lost during the job \(taken over by other with token 13\); not released: now held by other/)
    expect(md).toContain('> [!WARNING]\n> The lease was lost: taken over by other with token 13.')
    // A pipe inside a value is escaped, so the table keeps its shape.
    expect(md).toContain('token 13 already passed \\| the gate')
    expect(outcomeOf(d).ok).toBe(false)
  })

  test('no heartbeat status, release error', () => {
    const md = renderSummary({ ...base, heartbeat: undefined, waitedMs: undefined, release: { released: false, reason: 'UNAVAILABLE', error: true } })
    expect(rows(md).Heartbeats).toBe('no status (the heartbeat did not report)')
    expect(rows(md)['Waited for']).toBe('-')
    expect(md).toContain('Could not release: UNAVAILABLE; the lease expires by its ttl.')
  })

  test('markdown escaping', () => {
    expect(cell('a|b\nc<d>')).toBe('a\\|b c&lt;d&gt;')
    // A value ending in a backtick gets a longer fence and padding (CommonMark strips one space each side).
    expect(code('has `tick`')).toBe('`` has `tick` ``')
    expect(code('plain')).toBe('`plain`')
    expect(renderSummary({ ...base, resource: 'x|`y`' })).toContain('| Resource | `` x\\|`y` `` |')
  })

  test('skipped note', () => {
    expect(renderSkippedNote('a/b', 'someone')).toBe('leasefence: the lease on "a/b" was not acquired by this job (held by someone); nothing to release')
  })
})
