import { readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { createDb, type Db } from '../../src/db/knex.js';
import { Builders, type World } from '../support/builders.js';
import {
  buildDist,
  createServerDatabase,
  isAlive,
  killLeftovers,
  spawnServer,
  waitUntilListening,
  type ServerProcess,
} from '../support/server-process.js';

/**
 * One request cannot take the process down: the production start (`npm run start:prod`, with its
 * 160 MB heap) serves two CSV and two NDJSON exports of 200 calls with ~900 KB transcripts each and
 * the data-subject export of the person who made them, all at once to clients that stop reading
 * for a while, and stays under 250 MB resident while another request keeps being answered.
 */

const CALLS = 200;
/** Nine transcript entries of 100 000 characters (the most one entry may have): about 900 KB a call. */
const ENTRIES = 9;
const ENTRY_CHARS = 100_000;
const PHONE = '+49301234567';
const RSS_LIMIT_MB = 250;
/** How long each client stops reading after its first bytes: the server must hold its batch meanwhile. */
const PAUSE_MS = 1500;

let buildDir: string;
let db: Db;
let drop: () => Promise<void>;
let server: ServerProcess;
let nodePid: number;
let port: number;
let world: World;
let secondKey: string;

beforeAll(async () => {
  const database = await createServerDatabase();
  drop = database.drop;
  db = createDb(database.url, 2);
  const [dir] = await Promise.all([buildDist(), seed()]);
  buildDir = dir;
  server = spawnServer('npm', ['run', 'start:prod'], { env: { DATABASE_URL: database.url }, cwd: buildDir });
  ({ nodePid, port } = await waitUntilListening(server));
});

afterAll(async () => {
  killLeftovers();
  await db?.destroy();
  await drop?.();
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

/** The organization, two keys (each may run two exports at once) and the calls, made in PostgreSQL. */
async function seed(): Promise<void> {
  const builders = new Builders(db, { JWT_SECRET: 'unused-here' } as Config, async () => {});
  world = await builders.world();
  secondKey = (await builders.apiKey(world.orgId, world.userId, { rateLimitPerMinute: 10_000 })).key;
  // The search index's trigrams of 180 MB of text would take a minute to build; exports never use it.
  await db.raw('DROP INDEX IF EXISTS calls_search_trgm');
  // Written by the database itself: 180 MB need not cross the wire (nor this process's heap).
  await db.raw(
    `INSERT INTO calls (organization_id, agent_id, call_id, customer_name, phone_number, duration, done,
                        transcript, extracted_data, created_at, updated_at)
     SELECT :org, :agent, 'big-' || i, 'Anna Schmidt', :phone, 60, false,
            (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'text', i || '.' || n || ' ' || repeat('Hallo Anna ', :reps)))
               FROM generate_series(1, :entries) n),
            '{}', now() - i * interval '1 second', now()
       FROM generate_series(1, :calls) i`,
    {
      org: world.orgId,
      agent: world.agentId,
      phone: PHONE,
      reps: Math.floor(ENTRY_CHARS / 11) - 1,
      entries: ENTRIES,
      calls: CALLS,
    },
  );
}

/** CPU seconds the server process has used (user and system). */
function cpuSeconds(): number {
  const fields = readFileSync(`/proc/${nodePid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function residentMb(field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${nodePid}/status`, 'utf8');
  return Number(/^(\w+):\s+(\d+) kB$/m.exec(status.split('\n').find((l) => l.startsWith(field))!)![2]) / 1024;
}

type Download = { status: number; bytes: number; tail: string; lines: number };

/** A client that reads the first bytes, stops reading for PAUSE_MS, then reads the rest. */
function slowDownload(path: string, key: string, body?: object): Promise<Download> {
  return new Promise((resolve, reject) => {
    const payload = body ? JSON.stringify(body) : undefined;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: payload ? 'POST' : 'GET',
        headers: { 'X-API-Key': key, ...(payload ? { 'Content-Type': 'application/json' } : {}) },
      },
      (res) => {
        let bytes = 0;
        let lines = 0;
        let tail = '';
        let paused = false;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
          tail = (tail + chunk.subarray(-200).toString('latin1')).slice(-200);
          if (!paused) {
            paused = true;
            res.pause();
            setTimeout(() => res.resume(), PAUSE_MS);
          }
        });
        res.on('end', () => resolve({ status: res.statusCode!, bytes, tail, lines }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function get(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers: { 'X-API-Key': world.key } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      })
      .on('error', reject);
  });
}

describe('npm run start:prod under five large exports at once', () => {
  it(
    `serves them all to slow readers, stays under ${RSS_LIMIT_MB} MB resident and keeps answering`,
    { timeout: 300_000 },
    async () => {
      const exportPath = `/v1/agents/${world.agentId}/calls/export`;
      const started = performance.now();
      const cpuBefore = cpuSeconds();
      let done = false;
      const startRss = residentMb('VmRSS');
      let peakRss = startRss;
      const answers: { status: number; ms: number }[] = [];
      // Another tenant's requests meanwhile: the list of calls, one after the other.
      const others = (async () => {
        while (!done) {
          const started = performance.now();
          answers.push({
            // A refused connection (the process gone) is an answer that failed, not an error of the test.
            status: await get(`/v1/agents/${world.agentId}/calls?limit=1`).catch(() => 0),
            ms: performance.now() - started,
          });
          peakRss = Math.max(peakRss, residentMb('VmRSS'));
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      const results = await Promise.all([
        slowDownload(`${exportPath}?format=csv`, world.key),
        slowDownload(`${exportPath}?format=csv`, world.key),
        slowDownload(`${exportPath}?format=ndjson`, secondKey),
        slowDownload(`${exportPath}?format=ndjson`, secondKey),
        slowDownload(`/v1/organization/${world.orgId}/data-subjects/export`, secondKey, { phone_number: PHONE }),
      ]).finally(() => (done = true));
      await others;
      const highWater = residentMb('VmHWM');

      const [csvA, csvB, ndjsonA, ndjsonB, subject] = results;
      for (const csv of [csvA!, csvB!]) {
        expect(csv.status).toBe(200);
        expect(csv.bytes).toBeGreaterThan(CALLS * ENTRIES * ENTRY_CHARS);
        expect(csv.lines).toBe(CALLS + 1);
        expect(csv.tail.endsWith('\r\n')).toBe(true);
      }
      for (const ndjson of [ndjsonA!, ndjsonB!]) {
        expect(ndjson.status).toBe(200);
        expect(ndjson.lines).toBe(CALLS);
      }
      expect(subject!.status).toBe(200);
      expect(subject!.bytes).toBeGreaterThan(CALLS * ENTRIES * ENTRY_CHARS);
      expect(subject!.tail).toMatch(/"exported_at":"[^"]+"}$/);

      expect(isAlive(nodePid)).toBe(true);
      expect(answers.length).toBeGreaterThan(3);
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
      // Not stuck behind the exports: a request that waited for them would take as long as they do. The
      // bound grows with them (5 s, or a quarter of their time on a machine that other test files share).
      const exportsMs = performance.now() - started;
      expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(Math.max(5000, exportsMs / 4));
      console.info(
        `export-memory: ${Math.round((performance.now() - started) / 1000)} s, server CPU ${Math.round(cpuSeconds() - cpuBefore)} s`,
      );
      console.info(
        `export-memory: RSS ${Math.round(startRss)} MB before, peak ${Math.round(Math.max(peakRss, highWater))} MB (VmHWM ${Math.round(highWater)} MB)`,
      );
      expect(highWater).toBeLessThan(RSS_LIMIT_MB);
    },
  );
});
