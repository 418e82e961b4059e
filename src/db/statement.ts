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
  const parts = [first, ...others].map((statement, i) => {
    const text = shiftParameters(statement.text, values.length);
    values.push(...statement.values);
    return `s${i} AS (${text})`;
  });
  return { text: `WITH ${parts.join(', ')} SELECT * FROM s0`, values };
}

/** `text`'s `$1`, `$2`, ... as `$(1 + by)`, `$(2 + by)`, ...: its values follow `by` others. */
export function shiftParameters(text: string, by: number): string {
  return by === 0 ? text : text.replace(/\$(\d+)/g, (_, k: string) => `$${Number(k) + by}`);
}
