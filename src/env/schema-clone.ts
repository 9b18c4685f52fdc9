import pg from 'pg'
import { LeasefenceError, ValidationError } from '../core/errors'
import {
  CLONE_FUNCTION,
  COUNT_OBJECTS_SQL,
  INSTALL_CLONE_FUNCTION_SQL,
  INSTALL_LOCK_KEY,
  LEAKS_SQL,
  NAMES_SQL,
  NOT_CLONED_SQL
} from './schema-clone-sql'

/**
 * Per-slot database schemas, cloned from an already-migrated template schema (see schema-clone-sql.ts).
 * Every name is validated before any SQL is built; values travel as query parameters; identifiers are
 * only ever put into SQL by PostgreSQL's own format('%I').
 */

/** What a query needs: a pg.Client, or a fake in tests. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[]; rowCount?: number | null }>
}

/** The clone (or the template) disagrees with what it should be. */
export class SchemaCloneError extends LeasefenceError {
  constructor(message: string) {
    super('schema_clone_failed', message)
  }
}

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/
const RESERVED = new Set(['public', 'information_schema', 'leasefence'])

/**
 * A schema name we will build SQL around: lower-case letters, digits and _ (not starting with a digit),
 * at most 63 bytes, not pg_* nor a schema of PostgreSQL's or ours. `what` names the setting.
 */
export function validateSchemaName(name: string, what: string, opts: { allowPublic?: boolean } = {}): string {
  if (typeof name !== 'string' || !SCHEMA_RE.test(name)) {
    throw new ValidationError(
      `${what}: ${JSON.stringify(name)} is not a safe schema name; use only lower-case letters, digits and _ (not starting with a digit, at most 63)`
    )
  }
  if (name.startsWith('pg_') || (RESERVED.has(name) && !(opts.allowPublic && name === 'public'))) {
    throw new ValidationError(`${what}: "${name}" is reserved; choose another schema name`)
  }
  return name
}

export interface SchemaCounts {
  tables: number
  foreignKeys: number
  checks: number
  primaryKeys: number
  uniques: number
  indexes: number
  sequences: number
  defaults: number
}

export interface CloneResult {
  template: string
  schema: string
  templateCounts: SchemaCounts
  cloneCounts: SchemaCounts
  /** Objects of the template that cloning does not copy (views, functions, triggers, types...). */
  notCloned: { kind: string; name: string }[]
  ms: number
}

export interface CloneOptions {
  /** Copy the template's rows too (reference data, a migrations table). Default false: structure only. */
  copyData?: boolean
}

/** Installs (or replaces) leasefence.clone_schema; concurrent installs wait for each other. */
export async function installCloneFunction(db: Queryable): Promise<void> {
  await db.query('BEGIN')
  try {
    await db.query('SELECT pg_advisory_xact_lock($1)', [INSTALL_LOCK_KEY])
    await db.query(INSTALL_CLONE_FUNCTION_SQL)
    await db.query('COMMIT')
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined)
    throw err
  }
}

export async function countObjects(db: Queryable, schemas: string[]): Promise<Map<string, SchemaCounts>> {
  const { rows } = await db.query(COUNT_OBJECTS_SQL, [schemas])
  const out = new Map<string, SchemaCounts>()
  for (const r of rows) {
    out.set(String(r.schema), {
      tables: Number(r.tables),
      foreignKeys: Number(r.foreign_keys),
      checks: Number(r.checks),
      primaryKeys: Number(r.primary_keys),
      uniques: Number(r.uniques),
      indexes: Number(r.indexes),
      sequences: Number(r.sequences),
      defaults: Number(r.defaults)
    })
  }
  return out
}

/**
 * Compares clone and template: the same number of tables, foreign keys, CHECK constraints, primary keys,
 * unique constraints, indexes, sequences and defaults, the same constraint and index names per table,
 * and nothing in the clone (a foreign key, a
 * default's sequence) still pointing into the template. Returns the problems (empty when it matches).
 */
export async function verifyClone(
  db: Queryable,
  template: string,
  schema: string
): Promise<{ problems: string[]; templateCounts?: SchemaCounts; cloneCounts?: SchemaCounts }> {
  validateSchemaName(template, 'template', { allowPublic: true })
  validateSchemaName(schema, 'schema')
  const counts = await countObjects(db, [template, schema])
  const t = counts.get(template)
  const c = counts.get(schema)
  if (!t) return { problems: [`template schema "${template}" does not exist`] }
  if (!c) return { problems: [`schema "${schema}" does not exist`], templateCounts: t }
  const problems: string[] = []
  for (const key of Object.keys(t) as (keyof SchemaCounts)[]) {
    if (t[key] !== c[key]) problems.push(`${key}: template ${t[key]}, clone ${c[key]}`)
  }
  const names = await db.query(NAMES_SQL, [[template, schema]])
  for (const kind of ['constraint', 'index']) {
    const of = (s: string) => new Set(names.rows.filter((r) => r.schema === s && r.kind === kind).map((r) => String(r.name)))
    const inT = of(template)
    const inC = of(schema)
    const missing = [...inT].filter((n) => !inC.has(n))
    const extra = [...inC].filter((n) => !inT.has(n))
    if (missing.length) problems.push(`${kind}s missing in the clone: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`)
    if (extra.length) problems.push(`${kind}s only in the clone: ${extra.slice(0, 5).join(', ')}${extra.length > 5 ? ', ...' : ''}`)
  }
  const { rows } = await db.query(LEAKS_SQL, [schema, template])
  const leaks = rows[0] ?? {}
  if (Number(leaks.foreign_keys_into_template)) {
    problems.push(`${leaks.foreign_keys_into_template} foreign key(s) of the clone still reference the template`)
  }
  if (Number(leaks.defaults_on_template_sequences)) {
    problems.push(`${leaks.defaults_on_template_sequences} default(s) of the clone still use the template's sequences`)
  }
  return { problems, templateCounts: t, cloneCounts: c }
}

/**
 * Clones `template` into a fresh `schema` (dropping a leftover one), in one transaction with its check:
 * when the counts differ the transaction is rolled back and SchemaCloneError says what differs.
 * Installs the clone function first (idempotent).
 */
export async function cloneSchema(db: Queryable, template: string, schema: string, opts: CloneOptions = {}): Promise<CloneResult> {
  validateSchemaName(template, 'template', { allowPublic: true })
  validateSchemaName(schema, 'schema')
  if (template === schema) throw new ValidationError(`schema: "${schema}" is the template itself`)
  const started = performance.now()
  await installCloneFunction(db)
  const exists = await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [template])
  if (!exists.rows.length) {
    throw new SchemaCloneError(`template schema "${template}" does not exist: create it and run your migrations in it once`)
  }
  await db.query('BEGIN')
  try {
    await db.query(`SELECT ${CLONE_FUNCTION}($1::text, $2::text, $3::boolean)`, [template, schema, !!opts.copyData])
    const v = await verifyClone(db, template, schema)
    if (v.problems.length) {
      throw new SchemaCloneError(`the clone "${schema}" of "${template}" does not match its template (rolled back): ${v.problems.join('; ')}`)
    }
    const { rows } = await db.query(NOT_CLONED_SQL, [template])
    await db.query('COMMIT')
    return {
      template,
      schema,
      templateCounts: v.templateCounts!,
      cloneCounts: v.cloneCounts!,
      notCloned: rows.map((r) => ({ kind: String(r.kind), name: String(r.name) })),
      ms: performance.now() - started
    }
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined)
    throw err
  }
}

/** Drops the schema and everything in it. Returns false when there was none ("already gone"). */
export async function dropSchema(db: Queryable, schema: string): Promise<boolean> {
  validateSchemaName(schema, 'schema')
  const { rows } = await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])
  if (!rows.length) return false
  // The name is validated above and quoted by PostgreSQL itself.
  const { rows: q } = await db.query("SELECT format('DROP SCHEMA IF EXISTS %I CASCADE', $1::text) AS sql", [schema])
  await db.query(String(q[0].sql))
  return true
}

export async function schemaExists(db: Queryable, schema: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])
  return rows.length > 0
}

/**
 * Runs `fn` with a connected client and closes it. A lock wait longer than `lockTimeout` fails the
 * statement instead of hanging (a DROP behind an open transaction of a running app, say).
 */
export async function withDatabase<T>(url: string, fn: (db: pg.Client) => Promise<T>, opts: { lockTimeout?: string } = {}): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 15_000, application_name: 'leasefence' })
  client.on('error', () => undefined) // a dropped connection surfaces on the next query
  try {
    await client.connect()
  } catch (err) {
    throw new SchemaCloneError(`cannot connect to the database: ${(err as Error).message}`)
  }
  try {
    await client.query("SELECT set_config('lock_timeout', $1, false)", [opts.lockTimeout ?? '30s'])
    return await fn(client)
  } finally {
    await client.end().catch(() => undefined)
  }
}
