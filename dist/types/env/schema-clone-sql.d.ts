/**
 * The SQL of schema cloning, in one place.
 *
 * `leasefence.clone_schema(template, dest, copy_data)` copies the structure of an already-migrated
 * template schema into a fresh schema (migrations are never re-run):
 *   1. drops `dest` if it is left over, creates it;
 *   2. sequences (except identity sequences, which step 3 makes), with type, bounds, start, cache, cycle;
 *   3. tables with `LIKE template.t INCLUDING ALL EXCLUDING INDEXES` (columns, NOT NULL, defaults,
 *      identity, generated columns, CHECK constraints, comments, storage), then primary keys, unique and
 *      exclusion constraints and every other index re-created under the template's names;
 *   4. column defaults that call one of the template's sequences (serial, nextval) re-pointed at the
 *      clone's sequence of the same name, and `OWNED BY` re-created;
 *   5. optionally the rows (column lists skip generated columns; sequences set to the template's values);
 *   6. foreign keys, last: one between two template tables now references the clone's table; one to a
 *      table outside the template (a shared `public.users`) keeps pointing there.
 * It runs as one statement, so one transaction: it either finishes or leaves nothing behind.
 * The function's search_path is pg_catalog only, so every catalog rendering (pg_get_expr,
 * pg_get_constraintdef) is schema-qualified and every name it builds is quoted with format('%I').
 * Names are validated again here ([a-z0-9_] only), although callers validate them before any SQL.
 *
 * Not cloned (reported by NOT_CLONED_SQL): views, materialized views, partitioned tables and partitions,
 * foreign tables, functions, triggers, row-level security policies, and types (enums, domains): columns
 * of such types keep using the template's type.
 */
/** Schema that holds the function. */
export declare const FUNCTION_SCHEMA = "leasefence";
export declare const CLONE_FUNCTION = "leasefence.clone_schema";
/** Key of the transaction-level advisory lock that serializes concurrent installs of the function. */
export declare const INSTALL_LOCK_KEY = 1818652259;
export declare const INSTALL_CLONE_FUNCTION_SQL: string;
/** $1 = text[] of schema names. What the verification compares, per schema. */
export declare const COUNT_OBJECTS_SQL = "\nSELECT n.nspname AS schema,\n  (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition)::int AS tables,\n  (SELECT count(*) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid\n     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition AND k.contype = 'f')::int AS foreign_keys,\n  (SELECT count(*) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid\n     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition AND k.contype = 'c')::int AS checks,\n  (SELECT count(*) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid\n     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition AND k.contype = 'p')::int AS primary_keys,\n  (SELECT count(*) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid\n     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition AND k.contype = 'u')::int AS uniques,\n  (SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid\n     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition)::int AS indexes,\n  (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind = 'S')::int AS sequences,\n  (SELECT count(*) FROM pg_attrdef ad JOIN pg_class c ON c.oid = ad.adrelid\n     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition)::int AS defaults\nFROM pg_namespace n\nWHERE n.nspname = ANY($1::text[])\n";
/** $1 = clone, $2 = template: references from the clone that still lead into the template (must be 0). */
export declare const LEAKS_SQL = "\nSELECT\n  (SELECT count(*) FROM pg_constraint k\n     JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace\n     JOIN pg_class rc ON rc.oid = k.confrelid JOIN pg_namespace rn ON rn.oid = rc.relnamespace\n   WHERE k.contype = 'f' AND cn.nspname = $1 AND rn.nspname = $2)::int AS foreign_keys_into_template,\n  (SELECT count(*) FROM pg_depend d\n     JOIN pg_attrdef ad ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid\n     JOIN pg_class c ON c.oid = ad.adrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace\n     JOIN pg_class q ON d.refclassid = 'pg_class'::regclass AND q.oid = d.refobjid JOIN pg_namespace qn ON qn.oid = q.relnamespace\n   WHERE cn.nspname = $1 AND qn.nspname = $2 AND q.relkind = 'S')::int AS defaults_on_template_sequences\n";
/** $1 = template: what clone_schema does not copy, to warn about. */
export declare const NOT_CLONED_SQL = "\nSELECT kind, name FROM (\n  SELECT CASE\n           WHEN c.relkind = 'v' THEN 'view'\n           WHEN c.relkind = 'm' THEN 'materialized view'\n           WHEN c.relkind = 'p' THEN 'partitioned table'\n           WHEN c.relkind = 'f' THEN 'foreign table'\n           ELSE 'partition'\n         END AS kind, c.relname::text AS name\n  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace\n  WHERE n.nspname = $1 AND (c.relkind IN ('v', 'm', 'p', 'f') OR (c.relkind = 'r' AND c.relispartition))\n  UNION ALL\n  SELECT 'function', p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1\n  UNION ALL\n  SELECT 'type', t.typname::text FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace\n  WHERE n.nspname = $1 AND t.typtype IN ('e', 'd', 'r', 'm')\n  UNION ALL\n  SELECT 'trigger', c.relname || '.' || g.tgname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid\n    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT g.tgisinternal\n  UNION ALL\n  SELECT 'policy', c.relname || '.' || p.polname FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid\n    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1\n) x\nORDER BY kind, name\n";
/** $1 = text[] of schema names: constraint and index names per table, to compare clone and template. */
export declare const NAMES_SQL = "\nSELECT n.nspname::text AS schema, 'constraint' AS kind, c.relname::text || '.' || k.conname::text || ' (' || k.contype::text || ')' AS name\nFROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace\nWHERE n.nspname = ANY($1::text[]) AND c.relkind = 'r' AND NOT c.relispartition\nUNION ALL\nSELECT n.nspname, 'index', c.relname::text || '.' || i.relname::text\nFROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace\nWHERE n.nspname = ANY($1::text[]) AND c.relkind = 'r' AND NOT c.relispartition\n";
