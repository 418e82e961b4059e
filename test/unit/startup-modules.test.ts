import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const major = Number(process.versions.node.split('.')[0]);

describe('what the service loads', () => {
  // On Node 20 something else (the TypeScript loader) loads it anyway.
  it.skipIf(major < 24)("never loads Node's fetch (undici): an ESM import of node:http would (13 MB RSS)", () => {
    const script = [
      "await import('./src/app.ts');",
      "await import('./src/http/http-server.ts');",
      "await import('./src/http/port-reservation.ts');",
      "await import('./src/outgoing/guarded-request.ts');",
      "console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))));",
    ].join('\n');
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').pop()!)).toEqual([]);
  });
});
