/** A statement with `$1`, `$2`, ... placeholders and their values, as the driver takes it. */
export type Statement = { text: string; values: readonly unknown[] };

/**
 * `first` and `others` (each an INSERT, UPDATE or DELETE, with no data-modifying WITH of its own) as
 * one statement of data-modifying CTEs that gives `first`'s RETURNING rows: PostgreSQL runs every one
 * of them to completion, and when one fails none is written. One round trip, and no transaction
 * needed to keep them together.
 */
export function oneStatement(first: Statement, others: readonly Statement[]): Statement {
  const values: unknown[] = [];
  const parts = namedCtes([first, ...others], values, (i) => `s${i}`);
  return { text: `WITH ${parts.join(', ')} SELECT * FROM s0`, values };
}

/**
 * `statements` as CTEs named by `name`, for a WITH that already takes `values`: each one's `$n` moved
 * past the values before it, whose list it extends.
 */
export function namedCtes(statements: readonly Statement[], values: unknown[], name: (i: number) => string): string[] {
  return statements.map((statement, i) => `${name(i)} AS (${placed(statement, values)})`);
}

/** `statement`'s text for a statement that already takes `values`: its `$n` moved past them, its values appended. */
export function placed(statement: Statement, values: unknown[]): string {
  const text = shiftParameters(statement.text, values.length);
  values.push(...statement.values);
  return text;
}

/** `text`'s `$1`, `$2`, ... as `$(1 + by)`, `$(2 + by)`, ...: its values follow `by` others. */
function shiftParameters(text: string, by: number): string {
  return by === 0 ? text : text.replace(/\$(\d+)/g, (_, k: string) => `$${Number(k) + by}`);
}

/** The column `batchedStatement` adds to each row: the index of the statement in the batch that gave it. */
export const STATEMENT_IN_BATCH = 'statement_in_batch';

/**
 * Several `oneStatement`s (each given as its `first` and `others`) as one statement: each one's CTEs
 * under names of its own, and the `first` rows of all of them, each tagged with its statement's index
 * (STATEMENT_IN_BATCH). PostgreSQL runs every CTE; when one fails, none of them is written.
 */
export function batchedStatement(statements: readonly (readonly Statement[])[]): Statement {
  const values: unknown[] = [];
  const parts = statements.flatMap((parts, i) => namedCtes(parts, values, (k) => `b${i}_s${k}`));
  const selects = statements.map((_, i) => `SELECT ${i} AS ${STATEMENT_IN_BATCH}, * FROM b${i}_s0`);
  return { text: `WITH ${parts.join(', ')} ${selects.join(' UNION ALL ')}`, values };
}
