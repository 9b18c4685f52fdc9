import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { withSearchPath } from '../../src/env/env-file'
import { cloneSchema, dropSchema, SchemaCloneError, verifyClone, withDatabase } from '../../src/env/schema-clone'
import { startPostgres, TEMPLATE_MIGRATION, type TestPostgres } from '../support/postgres'

/** Schema cloning against a real, throwaway PostgreSQL cluster. */
let pgc: TestPostgres

beforeAll(async () => {
  pgc = await startPostgres()
  await pgc.query(TEMPLATE_MIGRATION) // "migrate" the template once
})
afterAll(async () => {
  await pgc?.stop()
})

async function rows<T extends Record<string, unknown>>(sql: string, values?: unknown[], url?: string): Promise<T[]> {
  return pgc.query<T>(sql, values, url)
}

describe('clone of the migrated template', () => {
  test('same tables, keys, constraints, indexes and sequences as the template; defaults and foreign keys point inside the clone', async () => {
    const r = await withDatabase(pgc.url, (db) => cloneSchema(db, 'tpl_migrated', 'agent_0'))
    expect(r.cloneCounts).toEqual(r.templateCounts)
    expect(r.templateCounts).toMatchObject({ tables: 3, foreignKeys: 2, checks: 3, primaryKeys: 3, uniques: 1, indexes: 6, sequences: 3 })
    expect(r.notCloned).toEqual([{ kind: 'view', name: 'paid_orders' }])

    // Constraint and index names are the template's (LIKE alone would rename orders_number_unique).
    const names = await rows<{ name: string }>(
      `SELECT conname AS name FROM pg_constraint WHERE connamespace = 'agent_0'::regnamespace
       UNION ALL SELECT relname FROM pg_class WHERE relnamespace = 'agent_0'::regnamespace AND relkind = 'i' ORDER BY 1`
    )
    expect(names.map((n) => n.name)).toEqual([
      'orders_amount_positive',
      'orders_number_unique',
      'orders_number_unique',
      'orders_pkey',
      'orders_pkey',
      'orders_status_known',
      'orders_user_id_fkey',
      'orders_user_idx',
      'schema_migrations_pkey',
      'schema_migrations_pkey',
      'users_age_check',
      'users_email_lower',
      'users_pkey',
      'users_pkey',
      'users_tenant_id_fkey'
    ])

    // Foreign keys: the one between template tables now references agent_0; the one to public stays.
    const fks = await rows<{ conname: string; target: string }>(
      `SELECT k.conname, k.confrelid::regclass::text AS target FROM pg_constraint k
       WHERE k.contype = 'f' AND k.connamespace = 'agent_0'::regnamespace ORDER BY 1`
    )
    expect(fks).toEqual([
      { conname: 'orders_user_id_fkey', target: 'agent_0.users' },
      { conname: 'users_tenant_id_fkey', target: 'tenants' }
    ])

    // Defaults use the clone's sequences.
    const defaults = await rows<{ col: string; def: string }>(
      `SELECT c.relname || '.' || a.attname AS col, pg_get_expr(d.adbin, d.adrelid) AS def
       FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
       WHERE c.relnamespace = 'agent_0'::regnamespace AND pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval%' ORDER BY 1`
    )
    expect(defaults).toEqual([
      { col: 'orders.number', def: "nextval('agent_0.order_numbers'::regclass)" },
      { col: 'users.id', def: "nextval('agent_0.users_id_seq'::regclass)" }
    ])
    // Serial sequences are owned by the clone's columns (dropping the table drops them).
    const owned = await rows<{ seq: string }>(`SELECT pg_get_serial_sequence('agent_0.users', 'id') AS seq`)
    expect(owned[0].seq).toBe('agent_0.users_id_seq')
    const identity = await rows<{ seq: string }>(`SELECT pg_get_serial_sequence('agent_0.orders', 'id') AS seq`)
    expect(identity[0].seq).toBe('agent_0.orders_id_seq')

    // Structure only: the template's rows are not copied by default.
    expect(await rows('SELECT * FROM agent_0.schema_migrations')).toEqual([])
  })

  test("a row inserted through the slot's DATABASE_URL lands in agent_0 only, with ids from agent_0's sequences", async () => {
    // Move the template's sequences on, so that an id taken from them would show.
    await rows(`SELECT setval('tpl_migrated.users_id_seq', 500), setval('tpl_migrated.order_numbers', 5000)`)
    await withDatabase(pgc.url, (db) => cloneSchema(db, 'tpl_migrated', 'agent_0'))
    const slotUrl = withSearchPath(pgc.url, 'agent_0')
    const app = new pg.Client({ connectionString: slotUrl })
    await app.connect()
    try {
      expect((await app.query('SHOW search_path')).rows[0].search_path).toBe('agent_0')
      const u = await app.query("INSERT INTO users (email, age, tenant_id) VALUES ('Ada@example.com', 36, 1) RETURNING id")
      expect(u.rows[0].id).toBe(1)
      const o = await app.query('INSERT INTO orders (user_id, amount_cents) VALUES ($1, 1250) RETURNING id, number, amount_eur', [u.rows[0].id])
      expect(o.rows[0]).toEqual({ id: '1', number: '1000', amount_eur: '12.5000000000000000' })
      expect(await rows(`SELECT (SELECT last_value FROM tpl_migrated.users_id_seq)::text AS t, (SELECT last_value FROM agent_0.users_id_seq)::text AS a`)).toEqual([
        { t: '500', a: '1' }
      ])
      // The constraints hold in the clone.
      await expect(app.query("INSERT INTO users (email, age) VALUES ('ada@EXAMPLE.com', 1)")).rejects.toMatchObject({ constraint: 'users_email_lower' })
      await expect(app.query('INSERT INTO orders (user_id, amount_cents) VALUES (1, -5)')).rejects.toMatchObject({ constraint: 'orders_amount_positive' })
      await expect(app.query('INSERT INTO orders (user_id, amount_cents) VALUES (999, 5)')).rejects.toMatchObject({ constraint: 'orders_user_id_fkey' })
      await expect(app.query("INSERT INTO users (email, tenant_id) VALUES ('x@y', 42)")).rejects.toMatchObject({ constraint: 'users_tenant_id_fkey' })
    } finally {
      await app.end()
    }
    expect(await rows('SELECT count(*)::int AS n FROM tpl_migrated.users')).toEqual([{ n: 0 }])
    expect(await rows('SELECT count(*)::int AS n FROM agent_0.users')).toEqual([{ n: 1 }])
    // ON DELETE CASCADE was carried over, inside the clone.
    await rows('DELETE FROM users', [], slotUrl)
    expect(await rows('SELECT count(*)::int AS n FROM agent_0.orders')).toEqual([{ n: 0 }])
  })

  test('libpq (psql) reads the encoded search_path of DATABASE_URL too', () => {
    const psql = join(pgc.bin, 'psql')
    const r = spawnSync(psql, [withSearchPath(pgc.url, 'agent_0'), '-XAtc', 'SHOW search_path'], { encoding: 'utf8' })
    expect(r.stderr).toBe('')
    expect(r.stdout.trim()).toBe('agent_0')
  })

  test('cloning again drops the leftover schema first: its rows are gone', async () => {
    await withDatabase(pgc.url, (db) => cloneSchema(db, 'tpl_migrated', 'agent_3'))
    await rows("INSERT INTO agent_3.users (email) VALUES ('left@over')")
    await rows('CREATE TABLE agent_3.stray (x int)')
    await withDatabase(pgc.url, (db) => cloneSchema(db, 'tpl_migrated', 'agent_3'))
    expect(await rows('SELECT count(*)::int AS n FROM agent_3.users')).toEqual([{ n: 0 }])
    expect(await rows(`SELECT to_regclass('agent_3.stray') AS r`)).toEqual([{ r: null }])
  })

  test('with copyData the rows come too, and sequences continue where the template stands', async () => {
    await rows("INSERT INTO tpl_migrated.users (email) VALUES ('seed@example.com')")
    try {
      const r = await withDatabase(pgc.url, (db) => cloneSchema(db, 'tpl_migrated', 'agent_4', { copyData: true }))
      expect(r.cloneCounts).toEqual(r.templateCounts)
      expect(await rows('SELECT version FROM agent_4.schema_migrations ORDER BY 1')).toEqual([{ version: '001_init' }, { version: '002_orders' }])
      const seeded = await rows<{ id: number }>('SELECT id FROM agent_4.users')
      expect(seeded).toHaveLength(1)
      const next = await rows<{ id: number }>("INSERT INTO agent_4.users (email) VALUES ('next@example.com') RETURNING id")
      expect(next[0].id).toBe(seeded[0].id + 1)
    } finally {
      await rows('TRUNCATE tpl_migrated.users CASCADE')
    }
  })

  test('two schemas cloned at the same time (the function is installed under a lock)', async () => {
    const results = await Promise.all(
      ['agent_5', 'agent_6', 'agent_7'].map((s) => withDatabase(pgc.url, (db) => cloneSchema(db, 'tpl_migrated', s)))
    )
    for (const r of results) expect(r.cloneCounts).toEqual(r.templateCounts)
  })
})

describe('failing loudly', () => {
  test('verification names what differs: a missing check, a foreign key into the template', async () => {
    await withDatabase(pgc.url, (db) => cloneSchema(db, 'tpl_migrated', 'agent_8'))
    await rows('ALTER TABLE agent_8.orders DROP CONSTRAINT orders_status_known')
    await rows('ALTER TABLE agent_8.orders DROP CONSTRAINT orders_user_id_fkey')
    await rows('ALTER TABLE agent_8.orders ADD CONSTRAINT orders_user_id_fkey FOREIGN KEY (user_id) REFERENCES tpl_migrated.users(id)')
    const v = await withDatabase(pgc.url, (db) => verifyClone(db, 'tpl_migrated', 'agent_8'))
    expect(v.problems).toEqual([
      'checks: template 3, clone 2',
      'constraints missing in the clone: orders.orders_status_known (c)',
      '1 foreign key(s) of the clone still reference the template'
    ])
  })

  test('a missing template is a clear error and creates nothing', async () => {
    await expect(withDatabase(pgc.url, (db) => cloneSchema(db, 'tpl_nope', 'agent_9'))).rejects.toThrow(
      /template schema "tpl_nope" does not exist/
    )
    expect(await rows(`SELECT 1 FROM pg_namespace WHERE nspname = 'agent_9'`)).toEqual([])
  })

  test('the SQL function refuses unsafe names itself (defence in depth)', async () => {
    await expect(rows(`SELECT leasefence.clone_schema('tpl_migrated', 'agent_0"; DROP SCHEMA public CASCADE; --')`)).rejects.toThrow(
      /unsafe schema name/
    )
    await expect(rows(`SELECT leasefence.clone_schema('tpl_migrated', 'pg_catalog')`)).rejects.toThrow(/unsafe schema name/)
    expect(await rows(`SELECT count(*)::int AS n FROM public.tenants`)).toEqual([{ n: 1 }])
  })

  test('dropSchema tolerates "already gone"', async () => {
    await withDatabase(pgc.url, (db) => cloneSchema(db, 'tpl_migrated', 'agent_10'))
    expect(await withDatabase(pgc.url, (db) => dropSchema(db, 'agent_10'))).toBe(true)
    expect(await withDatabase(pgc.url, (db) => dropSchema(db, 'agent_10'))).toBe(false)
  })

  test('an unreachable database is a SchemaCloneError naming the cause', async () => {
    await expect(withDatabase('postgres://postgres@127.0.0.1:1/x', async () => 1)).rejects.toThrow(SchemaCloneError)
  })
})
