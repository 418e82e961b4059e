/**
 * kb: time for a 1 MB document to reach `ready` through the product's background worker, and
 * search p99 over 10,000+ chunks, next to the one-PK-read baseline in alternating rounds. The API
 * takes documents of up to 100,000 characters, so the 1 MB text is put in place with SQL on a
 * document created through the API, and its processing job queued as the API would.
 */
import type autocannon from 'autocannon';
import type { Knex } from 'knex';
import { pino } from 'pino';
import { KB_JOB_OPTIONS, KB_PROCESS_QUEUE } from '../../src/jobs/queue-definitions.js';
import { JobQueue } from '../../src/jobs/queue.js';
import { failures, load, productEntry, startServer, summarize, tenant } from './support.js';

const SECONDS = Number(process.env.BENCH_KB_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_KB_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_KB_CONNECTIONS ?? 10);
const WORDS = [
  'Heizung',
  'Wartung',
  'Notdienst',
  'Rechnung',
  'Zahlung',
  'Termin',
  'Anfahrt',
  'Garantie',
  'Reparatur',
  'Ersatzteil',
  'Kessel',
  'Thermostat',
  'Druck',
  'Wasser',
  'Leitung',
  'Filter',
  'Pumpe',
  'Brenner',
];

/** About `bytes` of German-looking prose in paragraphs, deterministic. */
function document(bytes: number, seed: number): string {
  const parts: string[] = [];
  let size = 0;
  let i = seed;
  while (size < bytes) {
    const sentence = Array.from(
      { length: 12 },
      () => WORDS[(i = (i * 1103515245 + 12345) % 2 ** 31) % WORDS.length],
    ).join(' ');
    const paragraph = `${sentence}. Der Kunde fragt nach ${WORDS[i % WORDS.length]} Nummer ${i % 100000}.`;
    parts.push(paragraph);
    size += paragraph.length + 2;
  }
  return parts.join('\n\n');
}

export async function kb(db: Knex, databaseUrl: string) {
  const t = await tenant(db, 'Bench kb');
  const entry = productEntry();
  const product = await startServer(entry.args, {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    WORKERS_ENABLED: 'true',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
  });
  const baseline = await startServer(['--import', 'tsx', 'scripts/bench/servers.ts', 'baseline'], {
    DATABASE_URL: databaseUrl,
  });
  const queue = await JobQueue.start(databaseUrl, pino({ level: 'silent' }), { background: false });
  const headers = { 'X-API-Key': t.key, 'content-type': 'application/json' };
  const base = `${product.url}/v1/agents/${t.agentId}/knowledge-base`;

  /** Creates a document through the API, swaps in `content` and times it to ready. */
  async function toReady(content: string, title: string): Promise<number> {
    const res = await fetch(base, { method: 'POST', headers, body: JSON.stringify({ title, content: 'placeholder' }) });
    if (res.status !== 201 && res.status !== 202) throw new Error(`create document: ${res.status} ${await res.text()}`);
    const { id } = (await res.json()) as { id: string };
    await waitReady(id, 30_000);
    const started = performance.now();
    await db('kb_documents')
      .where({ id })
      .update({ content, status: 'pending', content_version: db.raw('content_version + 1') });
    await queue.send(KB_PROCESS_QUEUE, { documentId: id }, { ...KB_JOB_OPTIONS, singletonKey: id });
    await waitReady(id, 60_000);
    return performance.now() - started;
  }
  async function waitReady(id: string, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const res = await fetch(`${base}/${id}`, { headers });
      const { status } = (await res.json()) as { status: string };
      if (status === 'ready') return;
      if (status === 'error' || status === 'failed') throw new Error(`document ${id} ended ${status}`);
      if (performance.now() > deadline) throw new Error(`document ${id} not ready in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  try {
    const oneMb = await toReady(document(1024 * 1024, 1), 'One megabyte');
    let chunks = Number(
      (
        await db('kb_chunks')
          .count({ n: '*' })
          .whereIn('document_id', db('kb_documents').select('id').where({ agent_id: t.agentId }))
          .first()
      )?.n ?? 0,
    );
    for (let seed = 2; chunks < 10_000; seed++) {
      await toReady(document(1024 * 1024, seed), `Filler ${seed}`);
      chunks = Number(
        (
          await db('kb_chunks')
            .count({ n: '*' })
            .whereIn('document_id', db('kb_documents').select('id').where({ agent_id: t.agentId }))
            .first()
        )?.n ?? 0,
      );
    }
    await db.raw('ANALYZE kb_chunks');
    const searchUrl = `${base}/search`;
    const body = JSON.stringify({ query: 'Notdienst Kessel Druck', top_k: 5 });
    const check = await fetch(searchUrl, { method: 'POST', headers, body });
    if (check.status !== 200) throw new Error(`search: ${check.status} ${await check.text()}`);
    const runs: autocannon.Result[] = [];
    const baseRuns: autocannon.Result[] = [];
    const baseUrl = `${baseline.url}/v1/agents/${t.agentId}`;
    for (let round = 0; round < ROUNDS; round++) {
      baseRuns.push(await load(baseUrl, { connections: CONNECTIONS, duration: SECONDS }));
      runs.push(await load(searchUrl, { method: 'POST', headers, body, connections: CONNECTIONS, duration: SECONDS }));
    }
    if (failures([...runs, ...baseRuns]) > 0) throw new Error('kb search: failed answers');
    const search = summarize(runs);
    const b = summarize(baseRuns);
    process.stdout.write(
      [
        `kb: product runs ${entry.runtime}`,
        `1 MB document to ready: ${Math.round(oneMb)} ms (target <= 5000)`,
        `search over ${chunks} chunks, ${CONNECTIONS} connections: ${search.rps} req/s, p50 ${search.p50} ms, p99 ${search.p99} ms (target <= 50); baseline p99 ${b.p99} ms, ratio ${(search.p99 / Math.max(b.p99, 1)).toFixed(1)}x`,
        '',
      ].join('\n'),
    );
    return { one_mb_ready_ms: Math.round(oneMb), chunks, search, baseline: b, runtime: entry.runtime };
  } finally {
    await queue.stop();
    await product.stop();
    await baseline.stop();
  }
}
