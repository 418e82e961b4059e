import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type pg from 'pg';
import { emitKnexQuery, knexClient, knexConfigField, queryOnConnection } from '../platform/knex.js';
import { isStalePreparedStatement } from './pg-errors.js';
import { namedCtes } from './statement.js';
import type { PipelinedReads } from './pipelined-reads.js';
import type { Statement } from './statement.js';

/**
 * A query with a fixed SQL text, run as a named prepared statement: PostgreSQL parses it once per
 * connection instead of on every request and, where its plan does not depend on the values (a
 * primary-key or unique lookup), plans it once too. For the hot paths only: the key lookup of every
 * request without the read cache takes a fraction of the database time (`npm run bench -- chain`).
 *
 * The text never selects `*`: a column added by a migration would change the result type of the
 * cached statement, which PostgreSQL refuses until the connection is gone. Naming its columns, a
 * statement is simply planned again after a migration adds one. A migration that changes the type of
 * a selected column still changes the result type; `runPrepared` recovers from that by itself.
 *
 * The text is written with knex's placeholders, `?` for positional values or `:name` for named ones,
 * and turned into PostgreSQL's `$1` once, here: `runPrepared` hands it to the driver as it is.
 */
export type PreparedSql = {
  readonly name: string;
  /** With `$1`, `$2`, ... */
  readonly text: string;
  /** The named values in `$n` order, or the number of positional ones. */
  readonly parameters: readonly string[] | number;
  /** Sent over the database's pipelined connections (src/db/pipelined-reads.ts) outside a transaction. */
  readonly pipelined: boolean;
};

/** `:name` (not a `::type` cast, not a time inside a literal). */
const NAMED = /(?<![:\w]):([A-Za-z_]\w*)/g;

/**
 * `label` names it in PostgreSQL's views; the hash keeps two texts from ever sharing a name.
 * `pipelined`: a read of one indexed row that many requests make at once (see PipelinedReads).
 */
export function preparedSql(label: string, text: string, { pipelined = false } = {}): PreparedSql {
  if (/\*\s*(,|from\b)/i.test(text)) throw new Error(`Prepared statement ${label} must name its columns`);
  const names: string[] = [];
  let native = text.replace(NAMED, (_, name: string) => {
    if (!names.includes(name)) names.push(name);
    return `$${names.indexOf(name) + 1}`;
  });
  let count = 0;
  native = native.replace(/\?/g, () => `$${++count}`);
  if (names.length > 0 && count > 0) throw new Error(`Prepared statement ${label} mixes ? and :name values`);
  return {
    name: `${label}_${createHash('sha1').update(text).digest('hex').slice(0, 12)}`,
    text: native,
    parameters: names.length > 0 ? names : count,
    pipelined,
  };
}

/**
 * A statement composed at run time from parts already written with `$1`, `$2`, ... (pg-boss's job
 * insert among them), taking `count` positional values; the same text always gets the same name.
 */
export function preparedNativeSql(label: string, text: string, count: number): PreparedSql {
  if (/\*\s*(,|from\b)/i.test(text)) throw new Error(`Prepared statement ${label} must name its columns`);
  return {
    name: `${label}_${createHash('sha1').update(text).digest('hex').slice(0, 12)}`,
    text,
    parameters: count,
    pipelined: false,
  };
}

/**
 * Where in a WITH statement's text, after its last CTE, `withStatements` puts the others when they
 * read its CTEs (`afterCtes`).
 */
export const OTHERS_AFTER_CTES = '/* others */';

/**
 * `sql` with `others` (statements with their own `$n` values, such as an audit row) run as
 * data-modifying CTEs of it, for `sql` a `WITH` statement: one statement, prepared under a name of
 * its own. Gives it with its values, for `runPrepared`. The others go before `sql`'s CTEs, or with
 * `afterCtes` after them (at OTHERS_AFTER_CTES), for others that read them (an audit row written only
 * when `sql` found nothing).
 */
export function withStatements(
  sql: PreparedSql,
  bindings: Readonly<Record<string, unknown>>,
  others: readonly { text: string; values: readonly unknown[] }[],
  { afterCtes = false } = {},
): { sql: PreparedSql; values: readonly unknown[] | Readonly<Record<string, unknown>> } {
  if (others.length === 0) return { sql, values: bindings };
  const values = valuesOf(sql, bindings);
  if (!/^\s*WITH\s/i.test(sql.text) || (afterCtes && !sql.text.includes(OTHERS_AFTER_CTES)))
    throw new Error(`Prepared statement ${sql.name} is not a WITH statement with a place for others`);
  const parts = namedCtes(others, values, (i) => `other_${i}`).join(', ');
  const text = afterCtes
    ? sql.text.replace(OTHERS_AFTER_CTES, `, ${parts}`)
    : sql.text.replace(/^\s*WITH\s/i, `WITH ${parts}, `);
  return { sql: namedStatement(sql.name, text, values.length), values };
}

/** The pipelined connections of each database (`createDb`), by its knex client. */
const pipelines = new WeakMap<object, PipelinedReads>();

export function usePipelinedReads(db: Knex, reads: PipelinedReads): void {
  pipelines.set(knexClient(db), reads);
}

/** Whether `createDb` was asked for prepared statements (a transaction shares its database's setting). */
export function preparesStatements(db: Knex | Knex.Transaction): boolean {
  return knexConfigField(db, 'preparedStatements') !== false;
}

/**
 * Bumped when PostgreSQL refuses a statement because a migration changed the type of a column it
 * selects (say integer to bigint while this instance runs): that connection refuses the old name for
 * good, so statements are prepared again under new names and the one call that hit it is repeated.
 */
let generation = 0;

/** The statement's name in the current generation. */
function currentName(sql: PreparedSql, at: number): string {
  return at === 0 ? sql.name : `${sql.name}_${at}`;
}

function valuesOf(sql: PreparedSql, bindings: readonly unknown[] | Readonly<Record<string, unknown>>): unknown[] {
  if (typeof sql.parameters === 'number') {
    if (!Array.isArray(bindings) || bindings.length !== sql.parameters)
      throw new Error(`Prepared statement ${sql.name} takes ${sql.parameters} positional values`);
    return bindings as unknown[];
  }
  const named = bindings as Readonly<Record<string, unknown>>;
  return sql.parameters.map((name) => {
    if (named[name] === undefined) throw new Error(`Prepared statement ${sql.name} lacks the value :${name}`);
    return named[name];
  });
}

/**
 * One statement on a connection of `db`'s pool (or its transaction's connection), handed to the
 * driver directly: on the request path knex's query machinery (compiling the raw text, moving the
 * bindings to `$n`, its runner and its events' objects) cost more than the statement itself. knex's
 * `query` event is still emitted, so whatever listens to it sees these statements too.
 */
function execute(db: Knex | Knex.Transaction, config: pg.QueryConfig, pipelined: boolean): Promise<pg.QueryResult> {
  if (db.isTransaction && (db as Knex.Transaction).isCompleted())
    return Promise.reject(new Error('Transaction query already complete'));
  emitKnexQuery(db, { method: 'raw', sql: config.text, bindings: config.values, options: { name: config.name } });
  const reads = pipelined && !db.isTransaction ? pipelines.get(knexClient(db)) : undefined;
  return reads ? reads.query(config) : queryOnConnection(db, config);
}

/** The statement with `bindings`, prepared unless the database was created without prepared statements. */
export async function runPrepared(
  db: Knex | Knex.Transaction,
  sql: PreparedSql,
  bindings: readonly unknown[] | Readonly<Record<string, unknown>>,
): Promise<{ rows: unknown[] }> {
  const values = valuesOf(sql, bindings);
  if (!preparesStatements(db)) return execute(db, { text: sql.text, values }, false);
  const at = generation;
  try {
    return await execute(db, { name: currentName(sql, at), text: sql.text, values }, sql.pipelined);
  } catch (error) {
    // Inside a transaction the error has aborted it: the caller's transaction fails, later ones use new names.
    if (!isStalePreparedStatement(error)) throw error;
    if (generation === at) generation += 1;
    if (db.isTransaction) throw error;
    return execute(db, { name: currentName(sql, generation), text: sql.text, values }, sql.pipelined);
  }
}

/** The texts runStatementPrepared has named, with their names (kept while they are few). */
const namedTexts = new Map<string, PreparedSql>();
const NAMED_TEXTS_KEPT = 100;

/**
 * A statement made at run time (a knex insert of a fixed set of columns, `oneStatement` of such) run
 * as `runPrepared` runs a fixed one: parsed and planned once per connection. Only for a caller whose
 * statement has the same text on every call, or one of a few texts (each text is prepared on every
 * connection it runs on), and whose result columns are named (a RETURNING list; `SELECT *` of such
 * a CTE is named by it).
 */
export function runStatementPrepared(
  db: Knex | Knex.Transaction,
  label: string,
  statement: Statement,
): Promise<{ rows: unknown[] }> {
  return runPrepared(db, namedStatement(label, statement.text, statement.values.length), statement.values);
}

/** A statement composed at run time, named after its text once (the same text, the same name). */
function namedStatement(label: string, text: string, count: number): PreparedSql {
  let sql = namedTexts.get(text);
  if (!sql) {
    if (namedTexts.size >= NAMED_TEXTS_KEPT) namedTexts.clear();
    const hash = createHash('sha1').update(text).digest('hex').slice(0, 12);
    sql = { name: `${label}_${hash}`, text, parameters: count, pipelined: false };
    namedTexts.set(text, sql);
  }
  return sql;
}

/**
 * A statement knex built, run as `runStatementPrepared` runs one: one prepared statement per shape of
 * the query, its values bound. For a query whose plan suits every value it is given.
 */
export function runPreparedQuery(
  db: Knex | Knex.Transaction,
  label: string,
  query: Knex.QueryBuilder | Knex.Raw,
): Promise<{ rows: unknown[] }> {
  const { sql, bindings } = query.toSQL().toNative();
  return runStatementPrepared(db, label, { text: sql, values: bindings as unknown[] });
}
