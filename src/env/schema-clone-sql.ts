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
export const FUNCTION_SCHEMA = 'leasefence'
export const CLONE_FUNCTION = `${FUNCTION_SCHEMA}.clone_schema`

/** Key of the transaction-level advisory lock that serializes concurrent installs of the function. */
export const INSTALL_LOCK_KEY = 0x6c666e63 // "lfnc"

export const INSTALL_CLONE_FUNCTION_SQL = String.raw`
CREATE SCHEMA IF NOT EXISTS leasefence;

CREATE OR REPLACE FUNCTION leasefence.clone_schema(source_schema text, dest_schema text, copy_data boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog
AS $leasefence$
DECLARE
  src oid;
  dst oid;
  r record;
  s record;
  expr text;
  cols text;
  def text;
  old_ref text;
  at int;
BEGIN
  IF source_schema IS NULL OR source_schema !~ '^[a-z_][a-z0-9_]{0,62}$' THEN
    RAISE EXCEPTION 'leasefence.clone_schema: unsafe template schema name %', quote_literal(source_schema);
  END IF;
  IF dest_schema IS NULL OR dest_schema !~ '^[a-z_][a-z0-9_]{0,62}$' OR dest_schema ~ '^pg_' OR dest_schema IN ('public', 'information_schema', 'leasefence') THEN
    RAISE EXCEPTION 'leasefence.clone_schema: unsafe schema name %', quote_literal(dest_schema);
  END IF;
  IF source_schema = dest_schema THEN
    RAISE EXCEPTION 'leasefence.clone_schema: cannot clone schema % onto itself', source_schema;
  END IF;
  SELECT n.oid INTO src FROM pg_namespace n WHERE n.nspname = source_schema;
  IF src IS NULL THEN
    RAISE EXCEPTION 'leasefence.clone_schema: template schema "%" does not exist: create it and run the migrations in it once', source_schema;
  END IF;

  -- 1. a fresh schema
  EXECUTE format('DROP SCHEMA IF EXISTS %I CASCADE', dest_schema);
  EXECUTE format('CREATE SCHEMA %I', dest_schema);
  SELECT n.oid INTO dst FROM pg_namespace n WHERE n.nspname = dest_schema;

  -- 2. sequences, except identity sequences (LIKE ... INCLUDING IDENTITY creates those)
  FOR r IN
    SELECT c.relname, q.seqtypid, q.seqincrement, q.seqmin, q.seqmax, q.seqstart, q.seqcache, q.seqcycle
    FROM pg_class c JOIN pg_sequence q ON q.seqrelid = c.oid
    WHERE c.relnamespace = src AND c.relkind = 'S'
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'i')
    ORDER BY c.relname
  LOOP
    EXECUTE format('CREATE SEQUENCE %I.%I AS %s INCREMENT BY %s MINVALUE %s MAXVALUE %s START WITH %s CACHE %s %s',
      dest_schema, r.relname, format_type(r.seqtypid, NULL), r.seqincrement, r.seqmin, r.seqmax, r.seqstart, r.seqcache,
      CASE WHEN r.seqcycle THEN 'CYCLE' ELSE 'NO CYCLE' END);
  END LOOP;

  -- 3. tables: columns, NOT NULL, defaults, identity, generated columns, CHECK constraints, comments...
  FOR r IN
    SELECT c.relname, c.relpersistence FROM pg_class c
    WHERE c.relnamespace = src AND c.relkind = 'r' AND NOT c.relispartition
    ORDER BY c.relname
  LOOP
    EXECUTE format('CREATE %sTABLE %I.%I (LIKE %I.%I INCLUDING ALL EXCLUDING INDEXES)',
      CASE WHEN r.relpersistence = 'u' THEN 'UNLOGGED ' ELSE '' END, dest_schema, r.relname, source_schema, r.relname);
  END LOOP;
  -- ... primary keys, unique and exclusion constraints under the template's names (LIKE would rename them,
  -- and applications match constraint names in their error handling) ...
  FOR r IN
    SELECT t.relname AS tbl, k.conname, pg_get_constraintdef(k.oid) AS def
    FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid
    WHERE t.relnamespace = src AND t.relkind = 'r' AND NOT t.relispartition AND k.contype IN ('p', 'u', 'x')
    ORDER BY t.relname, k.contype, k.conname
  LOOP
    EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', dest_schema, r.tbl, r.conname, r.def);
  END LOOP;
  -- ... and every other index, under its name
  FOR r IN
    SELECT t.relname AS tbl, i.relname AS idx, pg_get_indexdef(x.indexrelid) AS def
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    WHERE t.relnamespace = src AND t.relkind = 'r' AND NOT t.relispartition
      AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.conrelid = x.indrelid AND k.contype IN ('p', 'u', 'x'))
    ORDER BY t.relname, i.relname
  LOOP
    old_ref := ' ON ' || format('%I.%I', source_schema, r.tbl) || ' USING ';
    at := position(old_ref IN r.def);
    IF at = 0 THEN
      RAISE EXCEPTION 'leasefence.clone_schema: cannot re-create index %.% (%)', r.tbl, r.idx, r.def;
    END IF;
    EXECUTE overlay(r.def PLACING ' ON ' || format('%I.%I', dest_schema, r.tbl) || ' USING ' FROM at FOR length(old_ref));
  END LOOP;

  -- 4. defaults that call a template sequence now call the clone's; OWNED BY as in the template
  FOR r IN
    SELECT c.relname AS tbl, a.attname AS col, pg_get_expr(ad.adbin, ad.adrelid) AS expr
    FROM pg_attrdef ad
    JOIN pg_class c ON c.oid = ad.adrelid
    JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
    WHERE c.relnamespace = dst AND a.attgenerated = ''
  LOOP
    expr := r.expr;
    FOR s IN SELECT c.relname FROM pg_class c WHERE c.relnamespace = src AND c.relkind = 'S' LOOP
      expr := replace(expr,
        quote_literal(format('%I.%I', source_schema, s.relname)) || '::regclass',
        quote_literal(format('%I.%I', dest_schema, s.relname)) || '::regclass');
    END LOOP;
    IF expr IS DISTINCT FROM r.expr THEN
      EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT %s', dest_schema, r.tbl, r.col, expr);
    END IF;
  END LOOP;
  FOR r IN
    SELECT q.relname AS seq, t.relname AS tbl, a.attname AS col
    FROM pg_depend d
    JOIN pg_class q ON q.oid = d.objid AND q.relkind = 'S'
    JOIN pg_class t ON t.oid = d.refobjid
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
    WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype = 'a'
      AND q.relnamespace = src AND t.relnamespace = src
  LOOP
    IF EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = dst AND c.relname = r.tbl AND c.relkind = 'r') THEN
      EXECUTE format('ALTER SEQUENCE %I.%I OWNED BY %I.%I.%I', dest_schema, r.seq, dest_schema, r.tbl, r.col);
    END IF;
  END LOOP;

  -- 5. rows, when asked (reference data, a migrations table)
  IF copy_data THEN
    FOR r IN
      SELECT c.oid, c.relname FROM pg_class c
      WHERE c.relnamespace = src AND c.relkind = 'r' AND NOT c.relispartition
      ORDER BY c.relname
    LOOP
      SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
      FROM pg_attribute a WHERE a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
      IF cols IS NOT NULL THEN
        EXECUTE format('INSERT INTO %I.%I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %I.%I',
          dest_schema, r.relname, cols, cols, source_schema, r.relname);
      END IF;
    END LOOP;
    FOR r IN
      SELECT c.relname FROM pg_class c WHERE c.relnamespace = src AND c.relkind = 'S'
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'i')
    LOOP
      EXECUTE format('SELECT setval(%L::regclass, last_value, is_called) FROM %I.%I',
        format('%I.%I', dest_schema, r.relname), source_schema, r.relname);
    END LOOP;
    FOR r IN
      SELECT c.relname AS tbl, a.attname AS col FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.relnamespace = src AND c.relkind = 'r' AND NOT c.relispartition AND a.attidentity <> '' AND NOT a.attisdropped
    LOOP
      EXECUTE format('SELECT setval(%L::regclass, last_value, is_called) FROM %s',
        pg_get_serial_sequence(format('%I.%I', dest_schema, r.tbl), r.col),
        pg_get_serial_sequence(format('%I.%I', source_schema, r.tbl), r.col));
    END LOOP;
  END IF;

  -- 6. foreign keys; one between template tables now references the clone's table
  old_ref := ' REFERENCES ' || quote_ident(source_schema) || '.';
  FOR r IN
    SELECT t.relname AS tbl, k.conname, pg_get_constraintdef(k.oid) AS def, rt.relnamespace = src AS internal
    FROM pg_constraint k
    JOIN pg_class t ON t.oid = k.conrelid
    JOIN pg_class rt ON rt.oid = k.confrelid
    WHERE k.contype = 'f' AND t.relnamespace = src AND t.relkind = 'r' AND NOT t.relispartition
    ORDER BY t.relname, k.conname
  LOOP
    def := r.def;
    IF r.internal THEN
      at := position(old_ref IN def);
      IF at = 0 THEN
        RAISE EXCEPTION 'leasefence.clone_schema: cannot re-point foreign key %.% (%)', r.tbl, r.conname, def;
      END IF;
      def := overlay(def PLACING ' REFERENCES ' || quote_ident(dest_schema) || '.' FROM at FOR length(old_ref));
    END IF;
    EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', dest_schema, r.tbl, r.conname, def);
  END LOOP;
END;
$leasefence$;
`

/** $1 = text[] of schema names. What the verification compares, per schema. */
export const COUNT_OBJECTS_SQL = `
SELECT n.nspname AS schema,
  (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition)::int AS tables,
  (SELECT count(*) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition AND k.contype = 'f')::int AS foreign_keys,
  (SELECT count(*) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition AND k.contype = 'c')::int AS checks,
  (SELECT count(*) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition AND k.contype = 'p')::int AS primary_keys,
  (SELECT count(*) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition AND k.contype = 'u')::int AS uniques,
  (SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition)::int AS indexes,
  (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind = 'S')::int AS sequences,
  (SELECT count(*) FROM pg_attrdef ad JOIN pg_class c ON c.oid = ad.adrelid
     WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND NOT c.relispartition)::int AS defaults
FROM pg_namespace n
WHERE n.nspname = ANY($1::text[])
`

/** $1 = clone, $2 = template: references from the clone that still lead into the template (must be 0). */
export const LEAKS_SQL = `
SELECT
  (SELECT count(*) FROM pg_constraint k
     JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
     JOIN pg_class rc ON rc.oid = k.confrelid JOIN pg_namespace rn ON rn.oid = rc.relnamespace
   WHERE k.contype = 'f' AND cn.nspname = $1 AND rn.nspname = $2)::int AS foreign_keys_into_template,
  (SELECT count(*) FROM pg_depend d
     JOIN pg_attrdef ad ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
     JOIN pg_class c ON c.oid = ad.adrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
     JOIN pg_class q ON d.refclassid = 'pg_class'::regclass AND q.oid = d.refobjid JOIN pg_namespace qn ON qn.oid = q.relnamespace
   WHERE cn.nspname = $1 AND qn.nspname = $2 AND q.relkind = 'S')::int AS defaults_on_template_sequences
`

/** $1 = template: what clone_schema does not copy, to warn about. */
export const NOT_CLONED_SQL = `
SELECT kind, name FROM (
  SELECT CASE
           WHEN c.relkind = 'v' THEN 'view'
           WHEN c.relkind = 'm' THEN 'materialized view'
           WHEN c.relkind = 'p' THEN 'partitioned table'
           WHEN c.relkind = 'f' THEN 'foreign table'
           ELSE 'partition'
         END AS kind, c.relname::text AS name
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = $1 AND (c.relkind IN ('v', 'm', 'p', 'f') OR (c.relkind = 'r' AND c.relispartition))
  UNION ALL
  SELECT 'function', p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
  UNION ALL
  SELECT 'type', t.typname::text FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
  WHERE n.nspname = $1 AND t.typtype IN ('e', 'd', 'r', 'm')
  UNION ALL
  SELECT 'trigger', c.relname || '.' || g.tgname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT g.tgisinternal
  UNION ALL
  SELECT 'policy', c.relname || '.' || p.polname FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
) x
ORDER BY kind, name
`

/** $1 = text[] of schema names: constraint and index names per table, to compare clone and template. */
export const NAMES_SQL = `
SELECT n.nspname::text AS schema, 'constraint' AS kind, c.relname::text || '.' || k.conname::text || ' (' || k.contype::text || ')' AS name
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = ANY($1::text[]) AND c.relkind = 'r' AND NOT c.relispartition
UNION ALL
SELECT n.nspname, 'index', c.relname::text || '.' || i.relname::text
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = ANY($1::text[]) AND c.relkind = 'r' AND NOT c.relispartition
`
