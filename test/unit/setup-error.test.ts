import { describe, expect, it } from 'vitest';
import { explainSetupError, SetupError, setupFailureText } from '../../src/setup-error.js';

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('explaining a failed start', () => {
  const url = 'postgres://app:s3cret@db.internal:6432/voice';

  it('names the database, user and fix, never the password', () => {
    const cases: [Error, RegExp][] = [
      [
        pgError('ECONNREFUSED', 'connect ECONNREFUSED'),
        /^PostgreSQL at db\.internal:6432 refused the connection: start/,
      ],
      [pgError('28P01', 'password authentication failed'), /refused the password of user "app": fix the password/],
      [
        pgError('3D000', 'database "voice" does not exist'),
        /^database "voice" does not exist on db\.internal:6432: create it/,
      ],
      [pgError('28000', 'role "app" does not exist'), /^role "app" does not exist on db\.internal:6432: create it/],
      [
        pgError('28000', 'no pg_hba.conf entry for host'),
        /no pg_hba\.conf entry.*: allow this host and user in pg_hba\.conf/,
      ],
      [pgError('ENOTFOUND', 'getaddrinfo ENOTFOUND db.internal'), /^database host "db\.internal" was not found/],
      [new Error('timeout expired'), /^PostgreSQL at db\.internal:6432 did not answer/],
      [
        pgError('ECONNRESET', 'read ECONNRESET'),
        /^the server at db\.internal:6432 accepted the connection and closed it without answering as PostgreSQL/,
      ],
      [
        new Error('Connection terminated unexpectedly'),
        /^the server at db\.internal:6432 accepted the connection and closed it without answering as PostgreSQL: if PostgreSQL is still starting .*fix the host and port/,
      ],
    ];
    for (const [error, line] of cases) {
      const explained = explainSetupError(error, 'database', url);
      expect(explained).toBeInstanceOf(SetupError);
      expect((explained as Error).message).toMatch(line);
      expect((explained as Error).message).not.toContain('s3cret');
      expect((explained as Error).cause).toBe(error);
    }
  });

  it('blames EMBEDDED_PG_PORT and DATA_DIR, not DATABASE_URL, when DATABASE_URL is not set', () => {
    for (const error of [
      pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:54329'),
      new Error('Connection terminated unexpectedly'),
    ]) {
      const explained = explainSetupError(error, 'database', undefined) as Error;
      expect(explained).toBeInstanceOf(SetupError);
      expect(explained.message).toMatch(/^the embedded PostgreSQL \(DATABASE_URL is not set\) did not answer/);
      expect(explained.message).toMatch(/EMBEDDED_PG_PORT and DATA_DIR of the running server/);
      expect(explained.message).not.toMatch(/fix .* in DATABASE_URL/);
    }
  });

  it('finds the code of a refusal on several addresses (AggregateError)', () => {
    const aggregate = new AggregateError([pgError('ECONNREFUSED', 'connect ECONNREFUSED ::1:5432')], '');
    expect((explainSetupError(aggregate, 'database', url) as Error).message).toMatch(/refused the connection/);
  });

  it('explains configuration errors, and leaves others alone', () => {
    const config = explainSetupError(
      new Error('Invalid configuration: JWT_SECRET: must be at least 32 characters'),
      'config',
    );
    expect((config as Error).message).toMatch(
      /^invalid configuration: JWT_SECRET: .*: set JWT_SECRET to a random value/,
    );
    const other = new Error('something else');
    expect(explainSetupError(other, 'database', url)).toBe(other);
  });

  it('prints one line, and the stacks only in debug', () => {
    const error = new SetupError(
      'PORT 3000 is already in use on 0.0.0.0',
      'set PORT to a free port',
      new Error('listen EADDRINUSE'),
    );
    expect(setupFailureText(error, false)).toBe(
      'Failed to start: PORT 3000 is already in use on 0.0.0.0: set PORT to a free port\n',
    );
    expect(setupFailureText(new Error('first\nsecond'), false)).toBe(
      'Failed to start: first (LOG_LEVEL=debug prints the stack)\n',
    );
    const debug = setupFailureText(error, true);
    expect(debug).toMatch(/^Failed to start: PORT 3000/);
    expect(debug).toMatch(/Caused by: Error: listen EADDRINUSE/);
    expect(debug).toMatch(/\n\s+at /);
  });
});
