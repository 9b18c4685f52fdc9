import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { ValidationError } from '../../src/core/errors'
import { envValue, formatEnvFile, parseEnvFile, redactUrl, withSearchPath, writeEnvFile } from '../../src/env/env-file'
import {
  bandPorts,
  DEFAULT_PORT_BASES,
  parsePortBases,
  portEnvName,
  slotPorts,
  validatePortLayout
} from '../../src/env/ports'
import { listeningInodes } from '../../src/env/process-ports'
import { cloneSchema, dropSchema, validateSchemaName, type Queryable } from '../../src/env/schema-clone'
import { validateBaseRef } from '../../src/env/worktree'
import { findPgBin } from '../support/postgres'

const tmp = mkdtempSync(join(tmpdir(), 'leasefence-env-units-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('ports', () => {
  test('slot i gets base + i × ports-per-slot: slot 1 of the defaults is 3010 / 4010 / 5010', () => {
    const p = slotPorts(1, DEFAULT_PORT_BASES, 10)
    expect(p.ports).toEqual({ dev: 3010, api: 4010, 'db-proxy': 5010 })
    expect(p.devPort).toBe(3010)
    expect(p.bands).toEqual([
      { name: 'dev', from: 3010, to: 3019 },
      { name: 'api', from: 4010, to: 4019 },
      { name: 'db-proxy', from: 5010, to: 5019 }
    ])
    expect(slotPorts(1, DEFAULT_PORT_BASES, 10)).toEqual(p) // deterministic
  })

  test('the bands of different slots are disjoint', () => {
    const all = new Set<number>()
    for (let i = 0; i < 8; i++) {
      for (const port of bandPorts(slotPorts(i, DEFAULT_PORT_BASES, 10))) {
        expect(all.has(port)).toBe(false)
        all.add(port)
      }
    }
    expect(all.size).toBe(8 * 3 * 10)
  })

  test('port-base parsing, env names, and the layout checks', () => {
    expect(parsePortBases('dev=3000, api=4000,db-proxy=5000')).toEqual(DEFAULT_PORT_BASES)
    expect(portEnvName('dev')).toBe('PORT')
    expect(portEnvName('api')).toBe('API_PORT')
    expect(portEnvName('db-proxy')).toBe('DB_PROXY_PORT')
    expect(() => parsePortBases('dev:3000')).toThrow(/NAME=PORT/)
    expect(() => validatePortLayout(parsePortBases('dev=3000,api=3050'), 10, 10)).toThrow(/overlap/)
    validatePortLayout(parsePortBases('dev=3000,api=3050'), 10, 5)
    expect(() => validatePortLayout(parsePortBases('dev=65530'), 10, 1)).toThrow(/65535/)
    expect(() => validatePortLayout(parsePortBases('Dev=3000'), 10, 1)).toThrow(/port name/)
    expect(() => validatePortLayout(parsePortBases('dev=3000,dev=4000'), 10, 1)).toThrow(/twice/)
  })
})

describe('env file and DATABASE_URL', () => {
  test('search_path goes into options, percent-encoded (libpq does not read + as a space)', () => {
    expect(withSearchPath('postgres://u:p@h:5432/db', 'agent_0')).toBe('postgres://u:p@h:5432/db?options=-c%20search_path%3Dagent_0')
    expect(withSearchPath('postgresql://h/db?sslmode=require', 'agent_1')).toBe(
      'postgresql://h/db?sslmode=require&options=-c%20search_path%3Dagent_1'
    )
    // An options parameter already there is kept; an old search_path in it is replaced.
    expect(withSearchPath('postgres://h/db?options=-c%20statement_timeout%3D5s%20-c%20search_path%3Dx', 'agent_2')).toBe(
      'postgres://h/db?options=-c%20statement_timeout%3D5s%20-c%20search_path%3Dagent_2'
    )
    expect(() => withSearchPath('mysql://h/db', 'agent_0')).toThrow(ValidationError)
    expect(() => withSearchPath('postgres://h/db', 'agent-0')).toThrow(ValidationError)
  })

  test('passwords are redacted for metadata', () => {
    expect(redactUrl('postgres://app:s3cret@db:5432/x')).toBe('postgres://app:***@db:5432/x')
    expect(redactUrl('postgres://db/x')).toBe('postgres://db/x')
  })

  test('values are quoted for sh and dotenv alike; files are 0600 and read back', () => {
    expect(envValue('3010')).toBe('3010')
    expect(envValue('postgres://u@h/db?a=1&options=-c%20search_path%3Dagent_0')).toBe("'postgres://u@h/db?a=1&options=-c%20search_path%3Dagent_0'")
    expect(envValue('/tmp/a b/wt-agent-0')).toBe("'/tmp/a b/wt-agent-0'")
    expect(envValue('a&b')).toBe("'a&b'")
    expect(() => envValue("it's")).toThrow(/single quote/)
    expect(() => envValue('a\nb')).toThrow(/line breaks/)
    const vars = { PORT: '3010', WORKTREE: '/tmp/a b/wt', DATABASE_URL: 'postgres://h/db?x=1&options=-c%20search_path%3Dagent_0' }
    expect(parseEnvFile(formatEnvFile(vars))).toEqual(vars)
    const file = writeEnvFile(join(tmp, 'sub/dir/.env'), vars)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(parseEnvFile(readFileSync(file, 'utf8'))).toEqual(vars)
  })
})

describe('names are validated before any SQL is built', () => {
  const unsafe = ['agent-0', 'Agent_0', 'agent_0; DROP TABLE users', '0agent', 'a"b', '', 'pg_temp', 'public', 'x'.repeat(64)]

  test.each(unsafe)('schema %j is refused', (name) => {
    expect(() => validateSchemaName(name, 'schema')).toThrow(ValidationError)
  })

  test('cloneSchema and dropSchema refuse an unsafe name without sending a single query', async () => {
    const sent: string[] = []
    const db: Queryable = {
      query: async (text: string) => {
        sent.push(text)
        return { rows: [] }
      }
    }
    await expect(cloneSchema(db, 'tpl_migrated', 'agent_0; DROP SCHEMA public')).rejects.toThrow(ValidationError)
    await expect(cloneSchema(db, 'tpl-migrated', 'agent_0')).rejects.toThrow(ValidationError)
    await expect(dropSchema(db, 'public')).rejects.toThrow(ValidationError)
    await expect(dropSchema(db, 'x"; DROP TABLE t; --')).rejects.toThrow(ValidationError)
    expect(sent).toEqual([])
    expect(validateSchemaName('public', 'template', { allowPublic: true })).toBe('public')
  })

  test('base refs that could be options or ranges are refused', () => {
    expect(validateBaseRef('origin/main')).toBe('origin/main')
    expect(() => validateBaseRef('--upload-pack=x')).toThrow(ValidationError)
    expect(() => validateBaseRef('a..b')).toThrow(ValidationError)
    expect(() => validateBaseRef('main; rm -rf /')).toThrow(ValidationError)
  })
})

describe('/proc/net/tcp parsing', () => {
  test('LISTEN sockets on the wanted ports, IPv4 and IPv6', () => {
    const proc = join(tmp, 'proc')
    mkdirSync(join(proc, 'net'), { recursive: true })
    const head = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n'
    writeFileSync(
      join(proc, 'net/tcp'),
      head +
        '   0: 0100007F:0BC2 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0\n' + // 3010 LISTEN
        '   1: 0100007F:0BC2 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 20 4 30 10 -1\n' + // 3010 ESTABLISHED
        '   2: 00000000:0FAB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3333 1 0000000000000000 100 0 0 10 0\n' // 4011 LISTEN
    )
    writeFileSync(
      join(proc, 'net/tcp6'),
      head + '   0: 00000000000000000000000001000000:1392 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0\n' // 5010
    )
    const m = listeningInodes([3010, 4011, 5010, 6000], proc)
    expect([...m.entries()].sort()).toEqual([
      ['1111', 3010],
      ['3333', 4011],
      ['4444', 5010]
    ])
  })
})

describe('test setup', () => {
  test('without PostgreSQL installed the env tests fail with install instructions (never skip)', () => {
    const saved = process.env.LEASEFENCE_PG_BIN
    delete process.env.LEASEFENCE_PG_BIN
    try {
      expect(() => findPgBin(join(tmp, 'no-postgresql-here'))).toThrow(/PostgreSQL is not installed[\s\S]*apt-get update && apt-get install -y postgresql/)
      expect(findPgBin()).toMatch(/^\/usr\/lib\/postgresql\/\d+\/bin$/)
    } finally {
      if (saved !== undefined) process.env.LEASEFENCE_PG_BIN = saved
    }
  })
})
