import { describe, expect, test } from 'vitest'
import { formatDuration, parseDuration } from '../../src/core/duration'
import { ValidationError } from '../../src/core/errors'

describe('parseDuration', () => {
  test.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['1.5s', 1500],
    ['90', 90_000],
    ['2.5', 2500],
    ['0', 0],
    [' 30s ', 30_000],
    ['30S', 30_000],
    ['250MS', 250]
  ])('%j is %i ms', (text, ms) => {
    expect(parseDuration(text, 'ttl')).toBe(ms)
  })

  test('numbers are seconds', () => {
    expect(parseDuration(90, 'ttl')).toBe(90_000)
    expect(parseDuration(1.5, 'ttl')).toBe(1500)
  })

  test.each(['', 'abc', '-1s', '1d', '30sec', '1e3', '.5s', '5.', 's', 'ms30', '1h30m', '10 minutes'])(
    'garbage %j is refused with a message that names the setting and shows valid forms',
    (text) => {
      let err: unknown
      try {
        parseDuration(text, 'wait-timeout')
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(ValidationError)
      const msg = (err as Error).message
      expect(msg).toMatch(/^wait-timeout: /)
      expect(msg).toContain(JSON.stringify(text))
      expect(msg).toMatch(/500ms.*30s.*2m.*1h/)
      expect(msg).toMatch(/bare seconds/)
    }
  )

  test.each([NaN, -1, Infinity, -Infinity])('the number %s is refused', (n) => {
    expect(() => parseDuration(n, 'ttl')).toThrow(ValidationError)
    expect(() => parseDuration(n, 'ttl')).toThrow(/^ttl: /)
  })
})

describe('formatDuration', () => {
  test.each([
    [450, '450ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [30_000, '30s'],
    [150_000, '2m30s'],
    [3_900_000, '1h5m'],
    [-2000, '-2s']
  ])('%i ms reads %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text)
  })

  test('what it prints parses back to the same duration', () => {
    for (const text of ['500ms', '30s', '2m', '1h']) expect(formatDuration(parseDuration(text, 'x'))).toBe(text)
  })
})
