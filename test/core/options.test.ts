import { describe, expect, test } from 'vitest'
import { ValidationError } from '../../src/core/errors'
import { parseOnBusy, parseTimings, validateOwner, validateToken } from '../../src/core/options'

function messageOf(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError)
    return (err as Error).message
  }
  throw new Error('expected a ValidationError')
}

describe('parseTimings', () => {
  test('heartbeat defaults to a third of ttl; ttl defaults to 90s', () => {
    expect(parseTimings('90s')).toEqual({ ttlMs: 90_000, heartbeatMs: 30_000 })
    expect(parseTimings('3s')).toEqual({ ttlMs: 3000, heartbeatMs: 1000 })
    expect(parseTimings('1s')).toEqual({ ttlMs: 1000, heartbeatMs: 333 })
    expect(parseTimings(undefined)).toEqual({ ttlMs: 90_000, heartbeatMs: 30_000 })
    expect(parseTimings('', '')).toEqual({ ttlMs: 90_000, heartbeatMs: 30_000 })
  })

  test('accepts a heartbeat of exactly ttl/3 and anything shorter down to 250ms', () => {
    expect(parseTimings('3s', '1s')).toEqual({ ttlMs: 3000, heartbeatMs: 1000 })
    expect(parseTimings('30s', '250ms')).toEqual({ ttlMs: 30_000, heartbeatMs: 250 })
    expect(parseTimings('1m', '20s')).toEqual({ ttlMs: 60_000, heartbeatMs: 20_000 })
  })

  test('ttl below 1s is refused, saying the minimum', () => {
    for (const ttl of ['999ms', '500ms', '0', '0.5']) {
      const msg = messageOf(() => parseTimings(ttl))
      expect(msg).toMatch(/^ttl: /)
      expect(msg).toMatch(/at least 1s/)
    }
    expect(parseTimings('1000ms').ttlMs).toBe(1000)
  })

  test('heartbeat above ttl/3 is refused, saying both ways to fix it', () => {
    const msg = messageOf(() => parseTimings('3s', '1001ms'))
    expect(msg).toMatch(/^heartbeat: 1001ms is more than a third of ttl \(3000ms\)/)
    expect(msg).toContain('at most 1000ms')
    expect(msg).toContain('raise ttl to at least 3003ms')
    expect(messageOf(() => parseTimings('90s', '31s'))).toContain('at most 30000ms')
    expect(messageOf(() => parseTimings('10s', '10s'))).toMatch(/more than a third/)
  })

  test('heartbeat below 250ms is refused, saying the minimum', () => {
    const msg = messageOf(() => parseTimings('1s', '200ms'))
    expect(msg).toMatch(/^heartbeat: 200ms is too short/)
    expect(msg).toContain('at least 250ms')
    expect(messageOf(() => parseTimings('10s', '0'))).toMatch(/too short/)
  })

  test('a ttl so short that its default heartbeat would be under 250ms cannot exist (ttl >= 1s)', () => {
    // 1s is the shortest ttl and its default heartbeat (333ms) is above the minimum.
    expect(parseTimings('1s').heartbeatMs).toBeGreaterThanOrEqual(250)
  })

  test('bad duration text names the setting', () => {
    expect(messageOf(() => parseTimings('ninety'))).toMatch(/^ttl: "ninety" is not a duration/)
    expect(messageOf(() => parseTimings('90s', 'often'))).toMatch(/^heartbeat: "often" is not a duration/)
  })
})

describe('parseOnBusy', () => {
  test('known modes, case and spaces forgiven; empty is the fallback', () => {
    expect(parseOnBusy('skip')).toBe('skip')
    expect(parseOnBusy('wait')).toBe('wait')
    expect(parseOnBusy(' FAIL ')).toBe('fail')
    expect(parseOnBusy(undefined)).toBe('skip')
    expect(parseOnBusy('', 'wait')).toBe('wait')
  })

  test('an unknown mode is refused and the modes are listed', () => {
    const msg = messageOf(() => parseOnBusy('block'))
    expect(msg).toMatch(/^on-busy: "block" is not a mode/)
    for (const m of ['skip', 'wait', 'fail']) expect(msg).toContain(m)
  })
})

describe('validateOwner', () => {
  test('accepts ordinary identities', () => {
    expect(() => validateOwner('run-123/deploy')).not.toThrow()
    expect(() => validateOwner('x'.repeat(1024))).not.toThrow()
  })

  test.each(['', '   ', '\n'])('refuses the empty identity %j', (owner) => {
    expect(messageOf(() => validateOwner(owner))).toMatch(/^owner: must be a non-empty string/)
  })

  test('refuses a non-string and an overlong identity', () => {
    expect(() => validateOwner(undefined as unknown as string)).toThrow(ValidationError)
    expect(() => validateOwner(42 as unknown as string)).toThrow(ValidationError)
    expect(messageOf(() => validateOwner('x'.repeat(1025)))).toMatch(/under 1024/)
  })
})

describe('validateToken', () => {
  test('accepts positive integers, as numbers or text', () => {
    expect(validateToken(1)).toBe(1)
    expect(validateToken('42')).toBe(42)
    expect(validateToken(' 7 ')).toBe(7)
    expect(validateToken(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER)
  })

  test.each([0, -1, 1.5, NaN, Infinity, '', 'abc', '1.5', '0', '-3', null, undefined, {}, Number.MAX_SAFE_INTEGER + 1])(
    'refuses %j, naming the variable it usually comes from',
    (bad) => {
      const msg = messageOf(() => validateToken(bad))
      expect(msg).toMatch(/^fencing token: ".*" is not a positive integer/)
      expect(msg).toContain('LEASEFENCE_FENCING_TOKEN')
    }
  )
})
