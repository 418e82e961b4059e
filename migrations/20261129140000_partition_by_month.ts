import type { Knex } from 'knex';

/**
 * calls, events, webhook_deliveries, webhook_delivery_attempts and audit_log become RANGE
 * partitioned by month on their creation time (PostgreSQL's declarative partitioning, no
 * extension). Written against the catalog, not a column list: whatever columns, checks, indexes,
 * foreign keys and triggers the tables have when this runs (earlier migrations of other branches
 * add columns) come along.
 *
 * Per table, in the migration's one transaction (ACCESS EXCLUSIVE on the table from the rename to
 * the commit, so reads and writes of it wait; the lock time is the copy plus the index builds,
 * measured in docs/scaling.md):
 *  1. the table and its indexes are renamed out of the way (`<name>__flat`);
 *  2. `CREATE TABLE <name> (LIKE <name>__flat INCLUDING DEFAULTS INCLUDING CONSTRAINTS ...)
 *     PARTITION BY RANGE (<key>)`, one partition per month that has rows, the months from last
 *     month to three ahead, and a default partition;
 *  3. every row is copied (the count is compared; a difference aborts the migration);
 *  4. indexes, foreign keys and triggers are recreated from their definitions. A primary key or
 *     unique constraint gets the partition key appended (PostgreSQL requires it);
 *  5. the flat table is dropped.
 *
 * Foreign keys that point AT these tables (webhook_deliveries.event_id, attempts.delivery_id) cannot
 * stay: a reference to a partitioned table needs the partition key in the referenced unique key.
 * Each is replaced by a statement trigger doing its ON DELETE CASCADE; the index behind it stays.
 *
 * What was there is recorded in `partitioned_tables.original`, which `down` replays; the partition
 * maintenance (src/db/partitions.ts) reads the table list and keys from `partitioned_tables` too.
 */
const TABLES: [table: string, key: string][] = [
  ['calls', 'created_at'],
  ['events', 'created_at'],
  ['webhook_deliveries', 'created_at'],
  ['webhook_delivery_attempts', 'attempted_at'],
  ['audit_log', 'created_at'],
];
const MONTHS_AHEAD = 3;

type IndexDef = {
  name: string;
  def: string;
  constraint_type: 'p' | 'u' | null;
  constraint_def: string | null;
  columns: string[];
  plain: boolean;
};
type Named = { name: string; def: string };
type IncomingFk = {
  child: string;
  name: string;
  def: string;
  cascade: boolean;
  columns: string[];
  parent_columns: string[];
};
type Original = { indexes: IndexDef[]; foreign_keys: Named[]; triggers: Named[]; incoming: IncomingFk[] };

const q = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;

async function rows<T>(knex: Knex, sql: string, bindings: readonly unknown[] = []): Promise<T[]> {
  return (await knex.raw(sql, bindings as Knex.RawBinding[])).rows as T[];
}

async function describe(knex: Knex, table: string): Promise<Original> {
  const indexes = await rows<IndexDef>(
    knex,
    `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def,
            con.contype AS constraint_type, pg_get_constraintdef(con.oid) AS constraint_def,
            ARRAY(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, n)
                    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.n) AS columns,
            (i.indexprs IS NULL AND i.indpred IS NULL) AS plain
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.contype IN ('p', 'u')
      WHERE i.indrelid = ?::regclass ORDER BY c.relname`,
    [table],
  );
  // References to another of these tables are the other table's `incoming` ones.
  const foreignKeys = await rows<Named>(
    knex,
    `SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
      WHERE conrelid = ?::regclass AND contype = 'f'
        AND confrelid::regclass::text <> ALL(?::text[]) ORDER BY conname`,
    [table, TABLES.map(([name]) => name)],
  );
  const triggers = await rows<Named>(
    knex,
    `SELECT tgname AS name, pg_get_triggerdef(oid) AS def FROM pg_trigger
      WHERE tgrelid = ?::regclass AND NOT tgisinternal ORDER BY tgname`,
    [table],
  );
  const incoming = await rows<IncomingFk>(
    knex,
    `SELECT conrelid::regclass::text AS child, conname AS name, pg_get_constraintdef(oid) AS def,
            confdeltype = 'c' AS cascade,
            ARRAY(SELECT a.attname::text FROM unnest(conkey) WITH ORDINALITY k(attnum, n)
                    JOIN pg_attribute a ON a.attrelid = conrelid AND a.attnum = k.attnum ORDER BY k.n) AS columns,
            ARRAY(SELECT a.attname::text FROM unnest(confkey) WITH ORDINALITY k(attnum, n)
                    JOIN pg_attribute a ON a.attrelid = confrelid AND a.attnum = k.attnum ORDER BY k.n) AS parent_columns
       FROM pg_constraint WHERE confrelid = ?::regclass AND contype = 'f' ORDER BY conname`,
    [table],
  );
  return { indexes, foreign_keys: foreignKeys, triggers, incoming };
}

function partitionName(table: string, month: string): string {
  return `${table}_p${month.slice(0, 4)}_${month.slice(5, 7)}`;
}

/** Month starts ('YYYY-MM-01', UTC) that hold rows, plus last month to MONTHS_AHEAD ahead. */
async function monthsFor(knex: Knex, source: string, key: string): Promise<string[]> {
  const found = await rows<{ month: string }>(
    knex,
    `SELECT to_char(m, 'YYYY-MM-DD') AS month FROM (
       SELECT DISTINCT date_trunc('month', ${q(key)}, 'UTC') AS m FROM ${q(source)}
       UNION SELECT date_trunc('month', now(), 'UTC') + make_interval(months => g)
         FROM generate_series(-1, ${MONTHS_AHEAD}) g) s ORDER BY m`,
  );
  return found.map((r) => r.month);
}

async function createPartitions(knex: Knex, table: string, months: string[]): Promise<void> {
  for (const month of months) {
    const start = new Date(`${month}T00:00:00Z`);
    const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
    await knex.raw(
      `CREATE TABLE ${q(partitionName(table, month))} PARTITION OF ${q(table)}
         FOR VALUES FROM ('${start.toISOString()}') TO ('${end.toISOString()}')`,
    );
  }
  await knex.raw(`CREATE TABLE ${q(`${table}_default`)} PARTITION OF ${q(table)} DEFAULT`);
}

async function copyRows(knex: Knex, from: string, to: string): Promise<void> {
  const [{ n: expected }] = await rows<{ n: string }>(knex, `SELECT count(*) AS n FROM ${q(from)}`);
  const copied = (await knex.raw(`INSERT INTO ${q(to)} SELECT * FROM ${q(from)}`)).rowCount;
  if (Number(expected) !== copied) throw new Error(`${from}: ${expected} rows, ${copied} copied`);
}

/** Renames the table and its indexes (constraints follow their index) out of the way. */
async function moveAside(knex: Knex, table: string, suffix: string): Promise<string> {
  const aside = `${table}__${suffix}`;
  const names = await rows<{ name: string }>(
    knex,
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = ?::regclass`,
    [table],
  );
  await knex.raw(`ALTER TABLE ${q(table)} RENAME TO ${q(aside)}`);
  for (const { name } of names)
    await knex.raw(`ALTER INDEX ${q(name)} RENAME TO ${q(`${name.slice(0, 50)}__${suffix}`)}`);
  return aside;
}

const LIKE = 'INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING IDENTITY INCLUDING STORAGE';

async function replay(knex: Knex, table: string, original: Original, partitionKey: string | null): Promise<void> {
  for (const index of original.indexes) {
    if (index.constraint_type) {
      let def = index.constraint_def!;
      if (partitionKey !== null && !index.columns.includes(partitionKey)) {
        def = `${index.constraint_type === 'p' ? 'PRIMARY KEY' : 'UNIQUE'} (${[...index.columns, partitionKey].map(q).join(', ')})`;
      }
      await knex.raw(`ALTER TABLE ${q(table)} ADD CONSTRAINT ${q(index.name)} ${def}`);
    } else if (partitionKey !== null && /^CREATE UNIQUE/.test(index.def) && !index.columns.includes(partitionKey)) {
      if (!index.plain) throw new Error(`${index.name}: a unique index with expressions cannot be partitioned`);
      await knex.raw(
        `CREATE UNIQUE INDEX ${q(index.name)} ON ${q(table)} (${[...index.columns, partitionKey].map(q).join(', ')})`,
      );
    } else {
      await knex.raw(index.def);
    }
  }
  for (const fk of original.foreign_keys)
    await knex.raw(`ALTER TABLE ${q(table)} ADD CONSTRAINT ${q(fk.name)} ${fk.def}`);
  for (const trigger of original.triggers) await knex.raw(trigger.def);
}

function cascadeFunction(fk: IncomingFk): string {
  return `cascade_${fk.name}`.slice(0, 63);
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE partitioned_tables (
    table_name text PRIMARY KEY,
    partition_key text NOT NULL,
    original jsonb NOT NULL,
    converted_at timestamptz NOT NULL DEFAULT now())`);
  const originals = new Map<string, Original>();
  for (const [table] of TABLES) originals.set(table, await describe(knex, table));
  // References to these tables go first: a partitioned table can only be referenced by its whole key.
  for (const original of originals.values()) {
    for (const fk of original.incoming) await knex.raw(`ALTER TABLE ${q(fk.child)} DROP CONSTRAINT ${q(fk.name)}`);
  }
  for (const [table, key] of TABLES) {
    const original = originals.get(table)!;
    const flat = await moveAside(knex, table, 'flat');
    await knex.raw(`CREATE TABLE ${q(table)} (LIKE ${q(flat)} ${LIKE}) PARTITION BY RANGE (${q(key)})`);
    await createPartitions(knex, table, await monthsFor(knex, flat, key));
    await copyRows(knex, flat, table);
    await knex.raw(`DROP TABLE ${q(flat)}`);
    await replay(knex, table, original, key);
    await knex.raw(`INSERT INTO partitioned_tables (table_name, partition_key, original) VALUES (?, ?, ?)`, [
      table,
      key,
      JSON.stringify(original),
    ]);
  }
  // ON DELETE CASCADE of the dropped references, as statement triggers (one DELETE per statement).
  for (const original of originals.values()) {
    for (const fk of original.incoming) {
      if (!fk.cascade) continue;
      const parent = TABLES.find(([table]) => originals.get(table) === original)![0];
      const fn = cascadeFunction(fk);
      await knex.raw(`CREATE FUNCTION ${q(fn)}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          DELETE FROM ${q(fk.child)} WHERE (${fk.columns.map(q).join(', ')}) IN
            (SELECT ${fk.parent_columns.map(q).join(', ')} FROM old_rows);
          RETURN NULL;
        END $$`);
      await knex.raw(`CREATE TRIGGER ${q(fn)} AFTER DELETE ON ${q(parent)}
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${q(fn)}()`);
    }
  }
}

export async function down(knex: Knex): Promise<void> {
  const recorded = await rows<{ table_name: string; original: Original }>(
    knex,
    `SELECT table_name, original FROM partitioned_tables`,
  );
  const byTable = new Map(recorded.map((r) => [r.table_name, r.original]));
  for (const original of byTable.values()) {
    for (const fk of original.incoming) {
      if (fk.cascade) await knex.raw(`DROP FUNCTION IF EXISTS ${q(cascadeFunction(fk))}() CASCADE`);
    }
  }
  for (const [table] of [...TABLES].reverse()) {
    const original = byTable.get(table);
    if (!original) continue;
    const parted = await moveAside(knex, table, 'parted');
    await knex.raw(`CREATE TABLE ${q(table)} (LIKE ${q(parted)} ${LIKE})`);
    await copyRows(knex, parted, table);
    await knex.raw(`DROP TABLE ${q(parted)} CASCADE`);
    await replay(knex, table, original, null);
  }
  for (const original of byTable.values()) {
    for (const fk of original.incoming)
      await knex.raw(`ALTER TABLE ${q(fk.child)} ADD CONSTRAINT ${q(fk.name)} ${fk.def}`);
  }
  await knex.raw(`DROP TABLE partitioned_tables`);
}
