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
  return statements.map((statement, i) => {
    const part = `${name(i)} AS (${shiftParameters(statement.text, values.length)})`;
    values.push(...statement.values);
    return part;
  });
}

/** `text`'s `$1`, `$2`, ... as `$(1 + by)`, `$(2 + by)`, ...: its values follow `by` others. */
function shiftParameters(text: string, by: number): string {
  return by === 0 ? text : text.replace(/\$(\d+)/g, (_, k: string) => `$${Number(k) + by}`);
}
