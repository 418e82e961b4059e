import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * A query with a fixed SQL text, run as a named prepared statement: PostgreSQL parses it once per
 * connection instead of on every request and, where its plan does not depend on the values (a
 * primary-key or unique lookup), plans it once too. For the hot paths only: the key lookup of every
 * request without the read cache went from 0.29 to 0.07 ms of database time.
 *
 * The text never selects `*`: a column added by a migration would change the result type of the
 * cached statement, which PostgreSQL refuses until the connection is gone. Naming its columns, a
 * statement is simply planned again after a migration.
 */
export type PreparedSql = { readonly name: string; readonly text: string };

/** `label` names it in PostgreSQL's views; the hash keeps two texts from ever sharing a name. */
export function preparedSql(label: string, text: string): PreparedSql {
  if (/\*\s*(,|from\b)/i.test(text)) throw new Error(`Prepared statement ${label} must name its columns`);
  return { name: `${label}_${createHash('sha1').update(text).digest('hex').slice(0, 12)}`, text };
}

/** Whether `createDb` was asked for prepared statements (a transaction shares its database's setting). */
export function preparesStatements(db: Knex | Knex.Transaction): boolean {
  return (db.client.config as { preparedStatements?: boolean }).preparedStatements !== false;
}

/** The statement with `bindings`, prepared unless the database was created without prepared statements. */
export function runPrepared(
  db: Knex | Knex.Transaction,
  sql: PreparedSql,
  bindings: readonly Knex.RawBinding[] | Knex.ValueDict,
): Knex.Raw {
  const query = db.raw(sql.text, bindings);
  return preparesStatements(db) ? query.options({ name: sql.name }) : query;
}
