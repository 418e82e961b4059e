/**
 * A start that cannot succeed as configured: what is wrong and what to do, for one line on stderr
 * (`Failed to start: <cause>: <fix>`). The original error is kept as `cause` for LOG_LEVEL=debug.
 */
export class SetupError extends Error {
  constructor(
    readonly reason: string,
    readonly fix: string,
    original?: unknown,
  ) {
    super(`${reason}: ${fix}`, original === undefined ? undefined : { cause: original });
    this.name = 'SetupError';
  }
}

/** The parts of a start an error can come from; each names the setting to look at. */
export type SetupStep = 'config' | 'database';

type ErrorLike = Error & { code?: string; errors?: unknown[] };

/** The error's code, or the first code among an AggregateError's errors (a refusal on IPv4 and IPv6). */
function codeOf(error: ErrorLike): string | undefined {
  if (error.code) return error.code;
  for (const inner of error.errors ?? []) {
    const code = (inner as ErrorLike | undefined)?.code;
    if (code) return code;
  }
  return undefined;
}

/** Host, port, user and database of a URL; never its password. */
function target(url: string | undefined, defaultPort: string) {
  try {
    const parsed = new URL(url ?? '');
    return {
      where: `${parsed.hostname}:${parsed.port || defaultPort}`,
      host: parsed.hostname,
      user: decodeURIComponent(parsed.username),
      database: decodeURIComponent(parsed.pathname.slice(1)),
    };
  } catch {
    return { where: 'the configured address', host: '', user: '', database: '' };
  }
}

const UNREACHABLE = new Set(['ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Without DATABASE_URL the database is the embedded one: its settings are DATA_DIR and EMBEDDED_PG_PORT. */
function explainEmbedded(error: ErrorLike): SetupError | undefined {
  const code = codeOf(error);
  if (code !== 'ECONNREFUSED' && code !== 'ECONNRESET' && !/Connection terminated|timeout/i.test(error.message))
    return undefined;
  return new SetupError(
    'the embedded PostgreSQL (DATABASE_URL is not set) did not answer on 127.0.0.1',
    'it may be stopping, or another process started it under this DATA_DIR on another port: run with the ' +
      'EMBEDDED_PG_PORT and DATA_DIR of the running server (npm start), or set DATABASE_URL',
    error,
  );
}

function explainDatabase(error: ErrorLike, url: string | undefined): SetupError | undefined {
  if (url === undefined) return explainEmbedded(error);
  const { where, host, user, database } = target(url, '5432');
  const code = codeOf(error);
  if (code === 'ECONNREFUSED') {
    return new SetupError(
      `PostgreSQL at ${where} refused the connection`,
      'start PostgreSQL there or fix the host and port in DATABASE_URL (unset DATABASE_URL for the embedded database)',
      error,
    );
  }
  if (code === '28P01') {
    return new SetupError(
      `PostgreSQL at ${where} refused the password of user "${user}"`,
      'fix the password in DATABASE_URL',
      error,
    );
  }
  if (code === '3D000') {
    return new SetupError(
      `database "${database}" does not exist on ${where}`,
      `create it (createdb -h ${host} -U ${user} ${database}) or fix the database name in DATABASE_URL`,
      error,
    );
  }
  if (code === '28000' && /role .* does not exist/.test(error.message)) {
    return new SetupError(
      `role "${user}" does not exist on ${where}`,
      `create it (CREATE ROLE "${user}" LOGIN PASSWORD '...') or fix the user name in DATABASE_URL`,
      error,
    );
  }
  if (code === '28000') {
    return new SetupError(
      `PostgreSQL at ${where} refused the connection: ${error.message}`,
      'allow this host and user in pg_hba.conf or fix DATABASE_URL',
      error,
    );
  }
  // Closed (FIN) or reset (RST) before any PostgreSQL message: the same cause as seen by the driver.
  if (code === 'ECONNRESET' || /Connection terminated unexpectedly/i.test(error.message)) {
    return new SetupError(
      `the server at ${where} accepted the connection and closed it without answering as PostgreSQL`,
      'if PostgreSQL is still starting there (a container that just started), wait a moment and start again; ' +
        'otherwise DATABASE_URL names another service or a proxy without a database behind it: fix the host and port',
      error,
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new SetupError(`database host "${host}" was not found`, 'fix the host in DATABASE_URL', error);
  }
  if ((code && UNREACHABLE.has(code)) || /timeout expired|connection timeout/i.test(error.message)) {
    return new SetupError(
      `PostgreSQL at ${where} did not answer`,
      'check that it runs and that this machine can reach it, or fix DATABASE_URL',
      error,
    );
  }
  return undefined;
}

function explainConfig(error: ErrorLike): SetupError | undefined {
  const problems = error.message.replace(/^Invalid configuration: /, '');
  if (problems === error.message) return undefined;
  const fix = problems.includes('JWT_SECRET')
    ? 'set JWT_SECRET to a random value of at least 32 characters (openssl rand -hex 32), in the environment or in .env'
    : 'fix these variables in the environment or in .env (docs/operations.md lists them)';
  return new SetupError(`invalid configuration: ${problems}`, fix, error);
}

/**
 * Turns an error from one step of the start into a SetupError naming its cause and fix, when it is
 * one the operator can fix; anything else is returned as it is. `url` is the step's DATABASE_URL
 * (only host, port, user and database are ever shown). A Redis that refuses is not a setup error:
 * the rate-limit store starts degraded.
 */
export function explainSetupError(error: unknown, step: SetupStep, url?: string): unknown {
  if (!(error instanceof Error) || error instanceof SetupError) return error;
  const explained = step === 'database' ? explainDatabase(error, url) : explainConfig(error);
  return explained ?? error;
}

/** Runs one step of the start; an error it throws comes out explained (explainSetupError). */
export async function setupStep<T>(step: SetupStep, url: string | undefined, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw explainSetupError(error, step, url);
  }
}

/**
 * The line a failed start prints on stderr: `Failed to start: <cause>: <fix>`, one line (an
 * unexpected error's first line). With `debug` the stack (and the original error's) follows.
 */
export function setupFailureText(error: unknown, debug: boolean): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = `Failed to start: ${message.split('\n')[0]}`;
  if (!debug) {
    const hint = error instanceof SetupError ? '' : ' (LOG_LEVEL=debug prints the stack)';
    return `${line}${hint}\n`;
  }
  const stacks: string[] = [];
  for (let e: unknown = error; e instanceof Error; e = e.cause) stacks.push(e.stack ?? e.message);
  return `${line}\n${stacks.join('\nCaused by: ')}\n`;
}
