import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KB_PARALLEL_DOCUMENTS,
  KnowledgeBaseProcessor,
  KnowledgeBaseWorker,
  type KbProcessJob,
  type ProcessOutcome,
  type ProcessorOptions,
} from '../../src/modules/knowledge-base/kb.worker.js';
import { KB_PROCESS_QUEUE, KB_PROCESSING_TIMEOUT_SECONDS, KB_SWEEP_QUEUE } from '../../src/jobs/queue-definitions.js';
import { KnowledgeBaseIndexRepository } from '../../src/modules/knowledge-base/kb-index.repository.js';
import { splitIntoChunks } from '../../src/modules/knowledge-base/chunking.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { runKnowledgeBaseJobs } from '../support/knowledge-base.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  await ctx.db('agents').where({ id: w.agentId }).update({ language: 'de' });
  await ctx.syncCaches();
});
afterAll(() => ctx.close());

const kb = (agentId: string) => `/v1/agents/${agentId}/knowledge-base`;
const documentRow = (id: string) => ctx.db('kb_documents').where({ id }).first();
const chunksOf = (id: string) =>
  ctx.db('kb_chunks').where({ document_id: id }).orderBy('position').select('content', 'ts_config');

async function createDocument(content: string, world: World = w): Promise<string> {
  const res = await ctx.http
    .post(kb(world.agentId))
    .set('X-API-Key', world.key)
    .send({ title: 'Doc', content })
    .expect(201);
  return res.body.id;
}

/** A processor wired like the container's, with test hooks for the splitting step. */
function processorWith(options: ProcessorOptions): KnowledgeBaseProcessor {
  return new KnowledgeBaseProcessor(
    ctx.db,
    new KnowledgeBaseIndexRepository(ctx.db),
    ctx.internals.kbJobs,
    ctx.clock,
    ctx.logger,
    options,
  );
}

/** Runs the queued jobs with `processor`, collecting what each run ended in. */
async function runWith(processor: KnowledgeBaseProcessor): Promise<ProcessOutcome[]> {
  const outcomes: ProcessOutcome[] = [];
  await ctx.queue.runPending<KbProcessJob>(KB_PROCESS_QUEUE, async (data, job) => {
    outcomes.push(await processor.process(data.documentId, job.id));
  });
  return outcomes;
}

describe('the knowledge-base pipeline', () => {
  it('takes a pending document through processing to ready, with its chunks and chunk_count', async () => {
    const content = 'Erster Absatz über Rechnungen.\n\nZweiter Absatz über Zahlungen.';
    const id = await createDocument(content);
    const seen: string[] = [];
    const outcomes = await runWith(
      processorWith({
        split: async (text, max) => {
          seen.push((await documentRow(id)).status);
          return splitIntoChunks(text, max);
        },
      }),
    );
    expect(outcomes).toEqual(['ready']);
    expect(seen).toEqual(['processing']);
    expect(await documentRow(id)).toMatchObject({
      status: 'ready',
      chunk_count: 1,
      error_message: null,
      processing_job_id: null,
    });
    expect(await chunksOf(id)).toEqual([{ content, ts_config: 'german' }]);
  });

  it('indexes with the configuration of the agent language, or the organization document language', async () => {
    const world = await ctx.build.world();
    const agentDoc = await createDocument('Ohne Sprache.', world);
    const org = await ctx.http
      .post(`/v1/organization/${world.orgId}/knowledge-base`)
      .set('Authorization', `Bearer ${world.token}`)
      .send({ title: 'FAQ', content: 'Nous livrons partout.', language: 'fr' })
      .expect(201);
    await runKnowledgeBaseJobs(ctx);
    expect((await chunksOf(agentDoc))[0]!.ts_config).toBe('simple');
    expect((await chunksOf(org.body.id))[0]!.ts_config).toBe('french');
    const [row] = await ctx.db('kb_chunks').where({ document_id: org.body.id }).select(ctx.db.raw('tsv::text AS tsv'));
    expect(row.tsv).toContain("'livron'");
  });

  it('ends in error with an error_message when the document has no text to index', async () => {
    const id = await createDocument(' \n\n \t ');
    await runKnowledgeBaseJobs(ctx);
    expect(await documentRow(id)).toMatchObject({
      status: 'error',
      chunk_count: 0,
      error_message: 'The document has no text to index',
    });
  });

  it('ends in failed with an error_message when processing breaks, and a content edit processes it again', async () => {
    const id = await createDocument('Some text.');
    const outcomes = await runWith(
      processorWith({
        split: () => {
          throw new Error('tokenizer exploded');
        },
      }),
    );
    expect(outcomes).toEqual(['failed']);
    const failed = await documentRow(id);
    expect(failed).toMatchObject({ status: 'failed', chunk_count: 0 });
    expect(failed.error_message).toMatch(/Processing failed/);
    expect(failed.error_message).not.toContain('tokenizer');

    await ctx.http
      .patch(`${kb(w.agentId)}/${id}`)
      .set('X-API-Key', w.key)
      .send({ content: 'Other text.' })
      .expect(200);
    await runKnowledgeBaseJobs(ctx);
    expect(await documentRow(id)).toMatchObject({ status: 'ready', chunk_count: 1, error_message: null });
  });

  it('ends with the chunks of the latest content when the document is edited while it is processing', async () => {
    const id = await createDocument('Alter Inhalt.');
    let edited = false;
    const outcomes = await runWith(
      processorWith({
        split: async (text, max) => {
          if (!edited) {
            edited = true;
            // The edit lands between reading the content and writing its chunks.
            await ctx.http
              .patch(`${kb(w.agentId)}/${id}`)
              .set('X-API-Key', w.key)
              .send({ content: 'Neuer Inhalt.' })
              .expect(200);
          }
          return splitIntoChunks(text, max);
        },
      }),
    );
    // The first run's chunks (old content) are thrown away; the job the PATCH queued builds the new ones.
    expect(outcomes).toEqual(['superseded', 'ready']);
    expect(await documentRow(id)).toMatchObject({
      status: 'ready',
      chunk_count: 1,
      content: 'Neuer Inhalt.',
      content_version: 2,
    });
    expect((await chunksOf(id)).map((c) => c.content)).toEqual(['Neuer Inhalt.']);
  });

  it('lets only one worker process a document when two jobs for it run at the same time', async () => {
    const id = await createDocument('Nur einmal.');
    const processor = ctx.internals.kbProcessor;
    const outcomes = await Promise.all([processor.process(id, randomUUID()), processor.process(id, randomUUID())]);
    expect(outcomes.sort()).toEqual(['ready', 'skipped']);
    expect((await chunksOf(id)).map((c) => c.content)).toEqual(['Nur einmal.']);
    await runKnowledgeBaseJobs(ctx); // the queued job finds nothing left to do
    expect(await documentRow(id)).toMatchObject({ status: 'ready', chunk_count: 1 });
  });

  it('does nothing harmful when the document is deleted while it is processing', async () => {
    const id = await createDocument('Bald weg.');
    const outcomes = await runWith(
      processorWith({
        split: async (text, max) => {
          await ctx.http
            .delete(`${kb(w.agentId)}/${id}`)
            .set('X-API-Key', w.key)
            .expect(204);
          return splitIntoChunks(text, max);
        },
      }),
    );
    expect(outcomes).toEqual(['superseded']);
    expect(await documentRow(id)).toBeUndefined();
    expect(await chunksOf(id)).toEqual([]);
  });
});

describe('recovery of a document left in processing by a crashed worker', () => {
  it('is taken again by the sweep once the processing timeout has passed', async () => {
    const id = await createDocument('Nach dem Absturz.');
    // A worker took it and died: the document stays in processing under a job that is gone.
    await ctx
      .db('kb_documents')
      .where({ id })
      .update({ status: 'processing', processing_job_id: randomUUID(), processing_started_at: ctx.clock.now() });
    await runKnowledgeBaseJobs(ctx); // a duplicate job meanwhile must not take it from a possibly live worker
    expect((await documentRow(id)).status).toBe('processing');

    expect(await ctx.internals.kbProcessor.recoverStale()).toBe(0);
    ctx.clock.advance((KB_PROCESSING_TIMEOUT_SECONDS + 1) * 1000);
    expect(await ctx.internals.kbProcessor.recoverStale()).toBeGreaterThanOrEqual(1);
    expect(await runKnowledgeBaseJobs(ctx)).toBeGreaterThanOrEqual(1);
    expect(await documentRow(id)).toMatchObject({ status: 'ready', chunk_count: 1 });
  });

  it('is taken again at once when pg-boss expires the dead job and retries it', async () => {
    const id = await createDocument('Wieder aufgenommen.');
    const [job] = await ctx.queue.boss.fetch<KbProcessJob>(KB_PROCESS_QUEUE);
    expect(job!.data.documentId).toBe(id);
    // The worker that fetched the job claimed the document, then the process died.
    await ctx
      .db('kb_documents')
      .where({ id })
      .update({ status: 'processing', processing_job_id: job!.id, processing_started_at: ctx.clock.now() });
    // Let pg-boss's expiry see the job as timed out, then make its retry due now (no sleeping).
    await ctx.db.raw(`UPDATE pgboss.job SET started_on = now() - interval '1 hour' WHERE id = ?`, [job!.id]);
    await ctx.queue.boss.expire();
    await ctx.db.raw(`UPDATE pgboss.job SET start_after = now() WHERE id = ? AND state = 'retry'`, [job!.id]);

    const ran: string[] = [];
    await ctx.queue.runPending<KbProcessJob>(KB_PROCESS_QUEUE, async (data, retried) => {
      ran.push(retried.id);
      await ctx.internals.kbProcessor.process(data.documentId, retried.id);
    });
    expect(ran).toEqual([job!.id]);
    expect(await documentRow(id)).toMatchObject({ status: 'ready', chunk_count: 1 });
  });
});

describe('the background worker', () => {
  it('registers the processing queue and the five-minute sweep schedule, and stops', async () => {
    const worker = new KnowledgeBaseWorker(ctx.queue, ctx.internals.kbProcessor);
    await worker.start();
    const schedules = await ctx.queue.boss.getSchedules();
    expect(schedules.map((s) => [s.name, s.cron])).toContainEqual([KB_SWEEP_QUEUE, '*/5 * * * *']);
    expect(await ctx.queue.boss.getQueue(KB_PROCESS_QUEUE)).toMatchObject({ policy: 'short', retryLimit: 3 });
    await worker.stop();
  });

  it(`processes ${KB_PARALLEL_DOCUMENTS} documents side by side`, async () => {
    await runKnowledgeBaseJobs(ctx);
    // Each split waits until every worker is splitting a document; one at a time would never get there.
    let splitting = 0;
    let release!: () => void;
    const allSplitting = new Promise<void>((resolve) => (release = resolve));
    const worker = new KnowledgeBaseWorker(
      ctx.queue,
      processorWith({
        split: async (text, max) => {
          if (++splitting === KB_PARALLEL_DOCUMENTS) release();
          let timer: NodeJS.Timeout | undefined;
          const alone = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('processed alone')), 20_000);
          });
          try {
            await Promise.race([allSplitting, alone]);
          } finally {
            clearTimeout(timer);
          }
          return splitIntoChunks(text, max);
        },
      }),
    );
    const ids = await Promise.all(
      Array.from({ length: KB_PARALLEL_DOCUMENTS }, (_, i) => createDocument(`Absatz ${i} über Rechnungen.`)),
    );
    await worker.start();
    try {
      await expect
        .poll(async () => (await Promise.all(ids.map(documentRow))).map((d) => d.status), { timeout: 30_000 })
        .toEqual(ids.map(() => 'ready'));
    } finally {
      await worker.stop();
    }
  }, 40_000);
});
