import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CLUSTER_ID_FILE,
  embeddedLayout,
  isAlive,
  pruneOrphanClusters,
  reachableByOthers,
} from '../../src/db/embedded-root.js';

// In the temp directory (removed after each test), which every user may normally traverse; the
// cases that need that are skipped where it is private.
const tmpReachable = reachableByOthers(os.tmpdir());
let base: string;
let shared: string;
/** A stand-in for the binaries package, reachable by every user (nothing is copied). */
let binaries: string;
beforeEach(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'vam-embedded-root-'));
  chmodSync(base, 0o755);
  shared = path.join(base, 'shared');
  binaries = path.join(base, 'binaries');
  mkdirSync(path.join(binaries, 'native', 'bin'), { recursive: true });
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function cluster(id: string, dataDir: string, withPg = true): string {
  const root = path.join(shared, 'clusters', id);
  mkdirSync(withPg ? path.join(root, 'pg') : root, { recursive: true });
  writeFileSync(path.join(root, 'DATA_DIR'), `${dataDir}\n`);
  return root;
}

describe('embeddedLayout', () => {
  it('keeps the cluster under DATA_DIR when not root', () => {
    const dataDir = path.join(base, 'data');
    expect(embeddedLayout(dataDir, shared, false, binaries)).toEqual({
      clusterDir: path.join(dataDir, 'pg'),
      scratchDir: dataDir,
    });
    expect(existsSync(shared)).toBe(false);
  });

  it.runIf(tmpReachable)(
    'as root with DATA_DIR in a 0700 directory: the cluster in the shared directory, named by the id file',
    () => {
      const privateDir = path.join(base, 'private');
      mkdirSync(privateDir, { mode: 0o700 });
      chmodSync(privateDir, 0o700);
      const dataDir = path.join(privateDir, '.data');
      mkdirSync(dataDir);
      const layout = embeddedLayout(dataDir, shared, true, binaries);
      const id = readFileSync(path.join(dataDir, CLUSTER_ID_FILE), 'utf8').trim();
      expect(layout.clusterDir).toBe(path.join(shared, 'clusters', id, 'pg'));
      expect(layout.scratchDir).toBe(path.join(shared, 'clusters', id));
      expect(readFileSync(path.join(shared, 'clusters', id, 'DATA_DIR'), 'utf8').trim()).toBe(dataDir);
      // The same id on the next start.
      expect(embeddedLayout(dataDir, shared, true, binaries).clusterDir).toBe(layout.clusterDir);
    },
  );

  it.runIf(tmpReachable)('adopts the cluster an earlier version kept under the hash of DATA_DIR', () => {
    const privateDir = path.join(base, 'private');
    mkdirSync(privateDir, { mode: 0o700 });
    chmodSync(privateDir, 0o700);
    const dataDir = path.join(privateDir, '.data');
    mkdirSync(dataDir);
    const legacy = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
    cluster(legacy, dataDir);
    expect(embeddedLayout(dataDir, shared, true, binaries).clusterDir).toBe(
      path.join(shared, 'clusters', legacy, 'pg'),
    );
  });
});

describe('the shared binaries', () => {
  it.runIf(tmpReachable)('as root with the binaries in a 0700 directory: one copy, open to all, no link out', () => {
    const privateDir = path.join(base, 'clone');
    mkdirSync(privateDir, { mode: 0o700 });
    chmodSync(privateDir, 0o700);
    const pkg = path.join(privateDir, 'node_modules', 'binaries');
    mkdirSync(path.join(pkg, 'native', 'bin'), { recursive: true });
    mkdirSync(path.join(pkg, 'native', 'lib'));
    mkdirSync(path.join(pkg, 'dist'));
    writeFileSync(path.join(pkg, 'package.json'), '{"version":"1.2.3"}');
    writeFileSync(path.join(pkg, 'dist', 'index.js'), 'export const postgres = "";');
    writeFileSync(path.join(pkg, 'native', 'bin', 'postgres'), '#!/bin/sh\n', { mode: 0o700 });
    chmodSync(path.join(pkg, 'native', 'bin', 'postgres'), 0o700);
    writeFileSync(path.join(pkg, 'native', 'lib', 'libpq.so.5.18'), '');
    symlinkSync('libpq.so.5.18', path.join(pkg, 'native', 'lib', 'libpq.so.5'));
    const dataDir = path.join(base, 'data');

    const layout = embeddedLayout(dataDir, shared, true, pkg);
    const copy = path.join(shared, `postgres-binaries-${process.platform}-${process.arch}-1.2.3`);
    expect(layout.binariesUrl).toBe(pathToFileURL(path.join(copy, 'dist', 'index.js')).href);
    expect(layout.clusterDir).toBe(path.join(dataDir, 'pg'));
    expect(statSync(path.join(copy, 'native', 'bin', 'postgres')).mode & 0o777).toBe(0o755);
    expect(statSync(path.join(copy, 'native')).mode & 0o777).toBe(0o755);
    expect(readlinkSync(path.join(copy, 'native', 'lib', 'libpq.so.5'))).toBe('libpq.so.5.18');
    // Made once: the next start uses the copy as it is.
    writeFileSync(path.join(copy, 'marker'), '');
    expect(embeddedLayout(dataDir, shared, true, pkg).binariesUrl).toBe(layout.binariesUrl);
    expect(existsSync(path.join(copy, 'marker'))).toBe(true);
  });
});

describe('pruneOrphanClusters', () => {
  it('removes the clusters whose project is gone or names another id, and keeps the others', () => {
    const live = path.join(base, 'live');
    mkdirSync(live);
    writeFileSync(path.join(live, CLUSTER_ID_FILE), 'aaaaaaaaaaaaaaaaaaaaaaaa\n');
    const kept = cluster('aaaaaaaaaaaaaaaaaaaaaaaa', live);
    const replaced = cluster('bbbbbbbbbbbbbbbbbbbbbbbb', live);
    const deleted = cluster('cccccccccccccccccccccccc', path.join(base, 'deleted-clone', '.data'));
    const legacyDir = path.join(base, 'legacy');
    mkdirSync(legacyDir);
    const legacy = cluster(createHash('sha256').update(legacyDir).digest('hex').slice(0, 16), legacyDir);
    const creating = path.join(shared, 'clusters', 'dddddddddddddddddddddddd');
    mkdirSync(creating, { recursive: true });

    expect(pruneOrphanClusters(shared).sort()).toEqual([replaced, deleted].sort());
    for (const dir of [kept, legacy, creating]) expect(existsSync(dir)).toBe(true);
  });

  it('keeps a cluster whose PostgreSQL still runs', () => {
    const running = cluster('eeeeeeeeeeeeeeeeeeeeeeee', path.join(base, 'gone'));
    writeFileSync(path.join(running, 'pg', 'postmaster.pid'), `${process.pid}\n`);
    expect(pruneOrphanClusters(shared)).toEqual([]);
  });
});

describe('isAlive', () => {
  it('is true for a running process and false for one that has exited and been reaped', () => {
    expect(isAlive(process.pid)).toBe(true);
    const exited = spawnSync(process.execPath, ['-e', '']).pid;
    expect(isAlive(exited)).toBe(false);
  });
});
