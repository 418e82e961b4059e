import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/db/pg-errors.js';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a connection cut mid-query', new Error('Connection terminated unexpectedly')],
    ['a connect timeout', new Error('Connection terminated due to connection timeout')],
    ['a pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ['a connect timeout before the TCP handshake finished', new Error('timeout expired')],
    ['a query read timeout', new Error('Query read timeout')],
    [
      'a connection the silence watchdog dropped',
      coded('ETIMEDOUT', 'Connection dropped: no answer from the database for 2000 ms'),
    ],
    ['a refused connection', coded('ECONNREFUSED')],
    ['a reset connection', coded('ECONNRESET')],
    ['a dual-stack refusal', Object.assign(new AggregateError([coded('ECONNREFUSED')]), { code: undefined })],
    ['too many clients', coded('53300', 'sorry, too many clients already')],
    ['out of memory on the server', coded('53200')],
    ['an admin shutdown', coded('57P01', 'terminating connection due to administrator command')],
    ['a server starting up', coded('57P03', 'the database system is starting up')],
    ['a connection failure', coded('08006')],
    [
      'a timeout acquiring a pool connection',
      Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' }),
    ],
    ['a wrapped cause', new Error('query failed', { cause: coded('ECONNREFUSED') })],
    ['a client that broke earlier', new Error('Client has encountered a connection error and is not queryable')],
  ])('is true for %s', (_case, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', coded('23505')],
    ['a syntax error', coded('42601')],
    ['a deadlock', coded('40P01')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['nothing', undefined],
  ])('is false for %s', (_case, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
