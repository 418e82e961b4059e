/**
 * kb: time for the largest document the product accepts (100,000 characters: the API and a database
 * constraint refuse more, so a 1 MB document cannot be stored) to reach `ready` through the
 * background worker; 1 MB of content as ten such documents created at once, until all ten are
 * `ready`; and search p99 over 10,000+ chunks, next to the one-PK-read baseline in alternating
 * rounds, for two questions: one whose words occur in every chunk (the filler corpus, the worst
 * case for ranking) and one whose words occur in a few chunks only (as in real documents).
 */
import type autocannon from 'autocannon';
import type { Knex } from 'knex';
import { kbSources } from './kb-sources.js';
import { failures, load, productEntry, startProduct, startServer, summarize, tenant, type Summary } from './support.js';

const SECONDS = Number(process.env.BENCH_KB_SECONDS ?? 3);
/** What the API and the database accept for one document's content (characters). */
const MAX_CHARS = 100_000;
const ROUNDS = Number(process.env.BENCH_KB_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_KB_CONNECTIONS ?? 10);
/** Chunks the search runs over; a smaller number only checks that the scenario runs end to end. */
const CHUNKS = Number(process.env.BENCH_KB_CHUNKS ?? 10_000);
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

/** Documents whose words the filler never uses: the realistic question matches only their chunks. */
const RARE_DOCUMENTS = [
  'Der Schornsteinfeger misst einmal im Jahr die Abgase am Kaminofen. Die Abgasmessung kostet 45 Euro.',
  'Vor der Abgasmessung sollte der Kaminofen zwei Stunden lang nicht beheizt werden.',
  'Ein neuer Kaminofen braucht die Abnahme durch den Schornsteinfeger, bevor er betrieben wird.',
];
/** The question kinds measured; the last two must find the Kaminofen documents first. */
const QUERIES = {
  every_chunk: 'Notdienst Kessel Druck',
  few_chunks: 'Schornsteinfeger Abgasmessung Kaminofen',
  // A spoken question: the agent has no language (no stop words), so "der" occurs in every chunk.
  mixed: 'Wann kommt der Schornsteinfeger zur Abgasmessung am Kaminofen?',
};
const KINDS = Object.keys(QUERIES) as (keyof typeof QUERIES)[];

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
  return parts.join('\n\n').slice(0, bytes);
}

export async function kb(db: Knex, databaseUrl: string) {
  // Earlier runs' tenants would stay in the index beside this one's (the same words in 10,000 more
  // chunks each): the target is about one tenant's chunks, so they go first (everything cascades).
  await db('organizations').where({ name: 'Bench kb' }).delete();
  // Their dead rows vacuumed now, not by autovacuum in the middle of the measured rounds.
  await db.raw('VACUUM kb_chunks, kb_documents');
  const t = await tenant(db, 'Bench kb');
  const entry = productEntry();
  const product = await startProduct(databaseUrl, {
    WORKERS_ENABLED: 'true',
    // The crawl below reads a site served by the bench itself on 127.0.0.1.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  const baseline = await startServer(['--import', 'tsx', 'scripts/bench/servers.ts', 'baseline'], {
    DATABASE_URL: databaseUrl,
  });
  const headers = { 'X-API-Key': t.key, 'content-type': 'application/json' };
  const base = `${product.url}/v1/agents/${t.agentId}/knowledge-base`;

  /** Creates a document through the API and times it to ready. */
  async function toReady(content: string, title: string): Promise<number> {
    const started = performance.now();
    await waitReady(await create(content, title), 120_000);
    return performance.now() - started;
  }
  async function create(content: string, title: string): Promise<string> {
    const res = await fetch(base, { method: 'POST', headers, body: JSON.stringify({ title, content }) });
    if (res.status !== 201) throw new Error(`create document: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
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
    const sources = await kbSources(db, base, headers, waitReady);
    process.stdout.write(
      `kb files and web: 50-page PDF to ready ${sources.pdf_50_pages_ready_ms} ms (target <= 10000); ` +
        `${sources.crawl_pages}-page crawl to ready ${sources.crawl_ready_ms} ms (target <= 20000); ` +
        `refresh with nothing changed ${sources.refresh_unchanged_ms} ms, chunks touched ${sources.refresh_unchanged_chunks_touched} (target 0)\n`,
    );
    const largest = await toReady(document(MAX_CHARS, 1), 'Largest accepted document');
    // 1 MB of content: ten documents of the largest size, created at once, until all are ready.
    const megabyteStarted = performance.now();
    const ten = await Promise.all(
      Array.from({ length: 10 }, (_, i) => create(document(MAX_CHARS, 1000 + i), `Megabyte part ${i + 1}`)),
    );
    await Promise.all(ten.map((id) => waitReady(id, 300_000)));
    const megabyte = performance.now() - megabyteStarted;
    for (const [i, content] of RARE_DOCUMENTS.entries()) await toReady(content, `Kaminofen ${i + 1}`);
    const countChunks = async () =>
      Number(
        (
          await db('kb_chunks')
            .count({ n: '*' })
            .whereIn('document_id', db('kb_documents').select('id').where({ agent_id: t.agentId }))
            .first()
        )?.n ?? 0,
      );
    let chunks = await countChunks();
    for (let seed = 2; chunks < CHUNKS; seed += 8) {
      await Promise.all(
        Array.from({ length: 8 }, (_, i) => toReady(document(MAX_CHARS, seed + i), `Filler ${seed + i}`)),
      );
      chunks = await countChunks();
    }
    await db.raw('ANALYZE kb_chunks');
    const searchUrl = `${base}/search`;
    const bodies = Object.fromEntries(
      KINDS.map((kind) => [kind, JSON.stringify({ query: QUERIES[kind], top_k: 5 })]),
    ) as Record<keyof typeof QUERIES, string>;
    for (const kind of KINDS) {
      const check = await fetch(searchUrl, { method: 'POST', headers, body: bodies[kind] });
      if (check.status !== 200) throw new Error(`search: ${check.status} ${await check.text()}`);
      const [first] = ((await check.json()) as { data: { document_title: string }[] }).data;
      if (!first || (kind !== 'every_chunk' && !first.document_title.startsWith('Kaminofen')))
        throw new Error(`search ${kind}: first hit ${first?.document_title ?? 'none'}`);
    }
    const runs = Object.fromEntries(KINDS.map((kind) => [kind, [] as autocannon.Result[]])) as Record<
      keyof typeof QUERIES,
      autocannon.Result[]
    >;
    const baseRuns: autocannon.Result[] = [];
    const baseUrl = `${baseline.url}/v1/agents/${t.agentId}`;
    // Warm up, as the chain scenario does: the first requests of a fresh process (JIT, pool
    // connections, each connection's first plans of the search statement) are not measured.
    await load(baseUrl, { connections: CONNECTIONS, duration: 1 });
    for (const kind of KINDS)
      await load(searchUrl, { method: 'POST', headers, body: bodies[kind], connections: CONNECTIONS, duration: 1 });
    for (let round = 0; round < ROUNDS; round++) {
      baseRuns.push(await load(baseUrl, { connections: CONNECTIONS, duration: SECONDS }));
      for (const kind of KINDS)
        runs[kind].push(
          await load(searchUrl, {
            method: 'POST',
            headers,
            body: bodies[kind],
            connections: CONNECTIONS,
            duration: SECONDS,
          }),
        );
    }
    if (failures([...Object.values(runs).flat(), ...baseRuns]) > 0) throw new Error('kb search: failed answers');
    const search = Object.fromEntries(KINDS.map((kind) => [kind, summarize(runs[kind])])) as Record<
      keyof typeof QUERIES,
      Summary
    >;
    const b = summarize(baseRuns);
    process.stdout.write(
      [
        `kb: product runs ${entry.runtime}`,
        `largest accepted document (${MAX_CHARS} characters; 1 MB is refused) to ready: ${Math.round(largest)} ms`,
        `1 MB as ten documents of ${MAX_CHARS} characters created at once, until all ready: ${Math.round(megabyte)} ms (target for 1 MB <= 5000)`,
        `search over ${chunks} chunks, ${CONNECTIONS} connections (target p99 <= 50 ms); baseline ${b.rps} req/s, p50 ${b.p50} ms, p99 ${b.p99} ms`,
        ...KINDS.map(
          (kind) =>
            `  ${kind} ("${QUERIES[kind]}"): ${search[kind].rps} req/s, p50 ${search[kind].p50} ms, p99 ${search[kind].p99} ms, ${(search[kind].p99 / Math.max(b.p99, 1)).toFixed(1)}x baseline p99`,
        ),
        '',
      ].join('\n'),
    );
    return {
      ...sources,
      largest_document_chars: MAX_CHARS,
      largest_document_ready_ms: Math.round(largest),
      megabyte_as_ten_documents_ready_ms: Math.round(megabyte),
      chunks,
      queries: QUERIES,
      search,
      baseline: b,
      runtime: entry.runtime,
    };
  } finally {
    await product.stop();
    await baseline.stop();
  }
}
