import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './emulator'

/**
 * A throwaway PostgreSQL cluster for one test file: initdb into a temp dir, started on a free loopback
 * port with trust auth and its unix socket in the temp dir, stopped and deleted afterwards. As root the
 * server binaries run as the `postgres` user (PostgreSQL refuses to run as root).
 *
 * No PostgreSQL installed is a test failure with instructions, never a silent skip.
 */
export const POSTGRES_INSTALL_HINT = [
  'PostgreSQL is not installed: the env tests need a real server (initdb and pg_ctl under /usr/lib/postgresql/*/bin).',
  'Install it with:',
  '  apt-get update && apt-get install -y postgresql',
  '(.ci/run does this on CI.) Or point LEASEFENCE_PG_BIN at a directory holding initdb and pg_ctl.'
].join('\n')

export function findPgBin(root = '/usr/lib/postgresql'): string {
  const explicit = process.env.LEASEFENCE_PG_BIN
  if (explicit) {
    if (existsSync(join(explicit, 'initdb')) && existsSync(join(explicit, 'pg_ctl'))) return explicit
    throw new Error(`LEASEFENCE_PG_BIN=${explicit} has no initdb/pg_ctl\n${POSTGRES_INSTALL_HINT}`)
  }
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin/initdb')) && existsSync(join(root, v, 'bin/pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (!versions.length) throw new Error(POSTGRES_INSTALL_HINT)
  return join(root, versions[0], 'bin')
}

export interface TestPostgres {
  port: number
  /** Admin URL of the test database (user postgres, trust auth). */
  url: string
  database: string
  dir: string
  bin: string
  /** A URL for another database of the cluster. */
  urlFor(database: string): string
  query<T extends Record<string, unknown> = Record<string, unknown>>(sql: string, values?: unknown[], url?: string): Promise<T[]>
  stop(): Promise<void>
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0

function postgresIds(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
  return { uid, gid }
}

/** Runs a server binary, as the postgres user when we are root. */
function runPg(bin: string, tool: string, args: string[], timeoutMs = 60_000): string {
  const cmd = isRoot() ? 'runuser' : join(bin, tool)
  const argv = isRoot() ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, LC_ALL: 'C' } })
  if (r.status !== 0) {
    throw new Error(`${tool} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout || r.error?.message}`)
  }
  return r.stdout
}

export async function startPostgres(opts: { database?: string } = {}): Promise<TestPostgres> {
  const bin = findPgBin()
  if (isRoot()) {
    try {
      postgresIds()
    } catch {
      throw new Error(`there is no "postgres" user to run the server as\n${POSTGRES_INSTALL_HINT}`)
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'leasefence-pg-'))
  chmodSync(dir, 0o700)
  if (isRoot()) {
    const { uid, gid } = postgresIds()
    chownSync(dir, uid, gid)
  }
  const data = join(dir, 'data')
  const log = join(dir, 'server.log')
  const database = opts.database ?? 'leasefence_test'
  let started = false
  const stopSync = () => {
    if (started) {
      try {
        runPg(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'], 30_000)
      } catch {
        // already stopped
      }
      started = false
    }
    rmSync(dir, { recursive: true, force: true })
  }
  // A test process that dies still takes its cluster down.
  const onExit = () => stopSync()
  process.once('exit', onExit)
  try {
    runPg(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'])
    const port = await freePort()
    const serverOpts = [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=50',
      '-c shared_buffers=32MB'
    ].join(' ')
    try {
      runPg(bin, 'pg_ctl', ['-D', data, '-l', log, '-o', serverOpts, '-w', '-t', '60', 'start'])
    } catch (err) {
      const text = existsSync(log) ? readFileSync(log, 'utf8') : ''
      throw new Error(`${(err as Error).message}\n${text}`)
    }
    started = true
    const urlFor = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`
    const admin = new pg.Client({ connectionString: urlFor('postgres') })
    await admin.connect()
    try {
      await admin.query(`CREATE DATABASE ${database}`)
    } finally {
      await admin.end()
    }
    const url = urlFor(database)
    return {
      port,
      url,
      database,
      dir,
      bin,
      urlFor,
      async query<T extends Record<string, unknown>>(sql: string, values?: unknown[], at = url): Promise<T[]> {
        const c = new pg.Client({ connectionString: at })
        await c.connect()
        try {
          return (await c.query(sql, values)).rows as T[]
        } finally {
          await c.end()
        }
      },
      async stop() {
        process.removeListener('exit', onExit)
        stopSync()
      }
    }
  } catch (err) {
    process.removeListener('exit', onExit)
    stopSync()
    throw err
  }
}

/**
 * The template schema of the tests, "migrated once": serial and identity keys, a foreign key (and one
 * to a table outside the template), check constraints, a unique constraint, a unique expression index,
 * a plain index, a standalone sequence used by a default, a generated column and a view (not cloned).
 */
export const TEMPLATE_MIGRATION = `
CREATE TABLE public.tenants (id serial PRIMARY KEY, name text NOT NULL);
INSERT INTO public.tenants (name) VALUES ('shared');

CREATE SCHEMA tpl_migrated;
CREATE SEQUENCE tpl_migrated.order_numbers START WITH 1000 INCREMENT BY 10;
CREATE TABLE tpl_migrated.users (
  id serial PRIMARY KEY,
  email text NOT NULL,
  age int CHECK (age >= 0),
  tenant_id int REFERENCES public.tenants(id),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_lower ON tpl_migrated.users (lower(email));
CREATE TABLE tpl_migrated.orders (
  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  number bigint NOT NULL DEFAULT nextval('tpl_migrated.order_numbers'),
  user_id int NOT NULL REFERENCES tpl_migrated.users(id) ON DELETE CASCADE,
  amount_cents int NOT NULL,
  amount_eur numeric GENERATED ALWAYS AS (amount_cents / 100.0) STORED,
  status text NOT NULL DEFAULT 'new',
  CONSTRAINT orders_amount_positive CHECK (amount_cents > 0),
  CONSTRAINT orders_status_known CHECK (status IN ('new', 'paid', 'shipped')),
  CONSTRAINT orders_number_unique UNIQUE (number)
);
CREATE INDEX orders_user_idx ON tpl_migrated.orders (user_id);
CREATE TABLE tpl_migrated.schema_migrations (version text PRIMARY KEY);
INSERT INTO tpl_migrated.schema_migrations VALUES ('001_init'), ('002_orders');
CREATE VIEW tpl_migrated.paid_orders AS SELECT * FROM tpl_migrated.orders WHERE status = 'paid';
`
