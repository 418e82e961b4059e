import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLUSTER_ID_FILE, embeddedLayout, pruneOrphanClusters } from '../../src/db/embedded-root.js';

let base: string;
let shared: string;
beforeEach(() => {
  mkdirSync('.data', { recursive: true });
  base = mkdtempSync(path.resolve('.data', 'embedded-root-'));
  chmodSync(base, 0o755);
  shared = path.join(base, 'shared');
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
    expect(embeddedLayout(dataDir, shared, false)).toEqual({
      clusterDir: path.join(dataDir, 'pg'),
      scratchDir: dataDir,
    });
    expect(existsSync(shared)).toBe(false);
  });

  it('as root with DATA_DIR in a 0700 directory: the cluster in the shared directory, named by the id file', () => {
    const privateDir = path.join(base, 'private');
    mkdirSync(privateDir, { mode: 0o700 });
    chmodSync(privateDir, 0o700);
    const dataDir = path.join(privateDir, '.data');
    mkdirSync(dataDir);
    const layout = embeddedLayout(dataDir, shared, true);
    const id = readFileSync(path.join(dataDir, CLUSTER_ID_FILE), 'utf8').trim();
    expect(layout.clusterDir).toBe(path.join(shared, 'clusters', id, 'pg'));
    expect(layout.scratchDir).toBe(path.join(shared, 'clusters', id));
    expect(readFileSync(path.join(shared, 'clusters', id, 'DATA_DIR'), 'utf8').trim()).toBe(dataDir);
    // The same id on the next start.
    expect(embeddedLayout(dataDir, shared, true).clusterDir).toBe(layout.clusterDir);
  });

  it('adopts the cluster an earlier version kept under the hash of DATA_DIR', () => {
    const privateDir = path.join(base, 'private');
    mkdirSync(privateDir, { mode: 0o700 });
    chmodSync(privateDir, 0o700);
    const dataDir = path.join(privateDir, '.data');
    mkdirSync(dataDir);
    const legacy = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
    cluster(legacy, dataDir);
    expect(embeddedLayout(dataDir, shared, true).clusterDir).toBe(path.join(shared, 'clusters', legacy, 'pg'));
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
