import pg from 'pg';
import { LeasefenceError } from '../core/errors';
/**
 * Per-slot database schemas, cloned from an already-migrated template schema (see schema-clone-sql.ts).
 * Every name is validated before any SQL is built; values travel as query parameters; identifiers are
 * only ever put into SQL by PostgreSQL's own format('%I').
 */
/** What a query needs: a pg.Client, or a fake in tests. */
export interface Queryable {
    query(text: string, values?: unknown[]): Promise<{
        rows: Record<string, unknown>[];
        rowCount?: number | null;
    }>;
}
/** The clone (or the template) disagrees with what it should be. */
export declare class SchemaCloneError extends LeasefenceError {
    constructor(message: string);
}
/**
 * A schema name we will build SQL around: lower-case letters, digits and _ (not starting with a digit),
 * at most 63 bytes, not pg_* nor a schema of PostgreSQL's or ours. `what` names the setting.
 */
export declare function validateSchemaName(name: string, what: string, opts?: {
    allowPublic?: boolean;
}): string;
export interface SchemaCounts {
    tables: number;
    foreignKeys: number;
    checks: number;
    primaryKeys: number;
    uniques: number;
    indexes: number;
    sequences: number;
    defaults: number;
}
export interface CloneResult {
    template: string;
    schema: string;
    templateCounts: SchemaCounts;
    cloneCounts: SchemaCounts;
    /** Objects of the template that cloning does not copy (views, functions, triggers, types...). */
    notCloned: {
        kind: string;
        name: string;
    }[];
    ms: number;
}
export interface CloneOptions {
    /** Copy the template's rows too (reference data, a migrations table). Default false: structure only. */
    copyData?: boolean;
}
/** Installs (or replaces) leasefence.clone_schema; concurrent installs wait for each other. */
export declare function installCloneFunction(db: Queryable): Promise<void>;
export declare function countObjects(db: Queryable, schemas: string[]): Promise<Map<string, SchemaCounts>>;
/**
 * Compares clone and template: the same number of tables, foreign keys, CHECK constraints, primary keys,
 * unique constraints, indexes, sequences and defaults, the same constraint and index names per table,
 * and nothing in the clone (a foreign key, a
 * default's sequence) still pointing into the template. Returns the problems (empty when it matches).
 */
export declare function verifyClone(db: Queryable, template: string, schema: string): Promise<{
    problems: string[];
    templateCounts?: SchemaCounts;
    cloneCounts?: SchemaCounts;
}>;
/**
 * Clones `template` into a fresh `schema` (dropping a leftover one), in one transaction with its check:
 * when the counts differ the transaction is rolled back and SchemaCloneError says what differs.
 * Installs the clone function first (idempotent).
 */
export declare function cloneSchema(db: Queryable, template: string, schema: string, opts?: CloneOptions): Promise<CloneResult>;
/** Drops the schema and everything in it. Returns false when there was none ("already gone"). */
export declare function dropSchema(db: Queryable, schema: string): Promise<boolean>;
export declare function schemaExists(db: Queryable, schema: string): Promise<boolean>;
/**
 * Runs `fn` with a connected client and closes it. A lock wait longer than `lockTimeout` fails the
 * statement instead of hanging (a DROP behind an open transaction of a running app, say).
 */
export declare function withDatabase<T>(url: string, fn: (db: pg.Client) => Promise<T>, opts?: {
    lockTimeout?: string;
}): Promise<T>;
