import { describe, expect, it } from 'vitest';
import { preparedSql } from '../../src/db/prepared.js';

describe('prepared statement texts', () => {
  it("turns knex's positional ? into $n, leaving casts alone", () => {
    const sql = preparedSql('probe', 'SELECT a FROM t WHERE id = ?::uuid AND b = ? LIMIT 1');
    expect(sql.text).toBe('SELECT a FROM t WHERE id = $1::uuid AND b = $2 LIMIT 1');
    expect(sql.parameters).toBe(2);
    expect(sql.name).toMatch(/^probe_[0-9a-f]{12}$/);
  });

  it('numbers each :name once, in order of first use, and leaves ::casts and times in literals alone', () => {
    const sql = preparedSql(
      'probe',
      "SELECT x::text, '10:30' FROM t WHERE org = :org AND (a = :agent OR b = :agent) AND c = :org::uuid LIMIT :n",
    );
    expect(sql.text).toBe(
      "SELECT x::text, '10:30' FROM t WHERE org = $1 AND (a = $2 OR b = $2) AND c = $1::uuid LIMIT $3",
    );
    expect(sql.parameters).toEqual(['org', 'agent', 'n']);
  });

  it('refuses a text that selects * or mixes both kinds of placeholder', () => {
    expect(() => preparedSql('probe', 'SELECT * FROM t WHERE id = ?')).toThrow(/must name its columns/);
    expect(() => preparedSql('probe', 'SELECT a FROM t WHERE id = ? AND b = :b')).toThrow(/mixes/);
  });
});
