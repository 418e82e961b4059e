import { describe, expect, it } from 'vitest';
import { preparedSql, withStatements } from '../../src/db/prepared.js';

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

  it('runs other statements as CTEs of a WITH statement, their values after its own, under one name per text', () => {
    const sql = preparedSql('probe_with', 'WITH p AS (SELECT :a AS a) SELECT a, :b AS b FROM p');
    expect(withStatements(sql, { a: 1, b: 2 }, [])).toEqual({ sql, values: { a: 1, b: 2 } });
    const audit = { text: 'INSERT INTO t (x, y) VALUES ($1, $2)', values: ['x', 'y'] };
    const first = withStatements(sql, { a: 1, b: 2 }, [audit]);
    expect(first.sql.text).toBe(
      'WITH other_0 AS (INSERT INTO t (x, y) VALUES ($3, $4)), p AS (SELECT $1 AS a) SELECT a, $2 AS b FROM p',
    );
    expect(first.values).toEqual([1, 2, 'x', 'y']);
    expect(first.sql.name).not.toBe(sql.name);
    expect(withStatements(sql, { a: 3, b: 4 }, [{ ...audit, values: ['z', 'w'] }])).toEqual({
      sql: first.sql,
      values: [3, 4, 'z', 'w'],
    });
    expect(() => withStatements(preparedSql('probe_plain', 'SELECT :a AS a'), { a: 1 }, [audit])).toThrow(/WITH/);
  });
});
