import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createDb, type Db } from '../../src/db/knex.js';

/** What every pooled connection is set to when it is made (src/db/knex.ts). */
const made: Db[] = [];
afterAll(() => Promise.all(made.map((db) => db.destroy())));
const db = (options: Parameters<typeof createDb>[3]) => {
  const created = createDb(inject('adminUrl'), 2, undefined, { pipelineConnections: 0, silenceMs: 0, ...options });
  made.push(created);
  return created;
};
const jit = async (d: Db) => ((await d.raw('SHOW jit')).rows[0] as { jit: string }).jit;

describe('pooled connections', () => {
  it('run without JIT compilation, in and out of a transaction', async () => {
    const d = db({});
    expect(await jit(d)).toBe('off');
    expect(await d.transaction(async (trx) => ((await trx.raw('SHOW jit')).rows[0] as { jit: string }).jit)).toBe(
      'off',
    );
  });

  it("keep the database's own setting behind a transaction-mode pooler (no prepared statements)", async () => {
    const server = db({});
    const defaultJit = (
      (await server.raw('SELECT reset_val FROM pg_settings WHERE name = ?', ['jit'])).rows[0] as {
        reset_val: string;
      }
    ).reset_val;
    expect(await jit(db({ preparedStatements: false }))).toBe(defaultJit);
  });
});
