import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KbProcessJob } from '../../src/modules/knowledge-base/kb.worker.js';
import { KB_PROCESS_QUEUE } from '../../src/jobs/queue-definitions.js';
import type { TestContext } from './context.js';

const corpusDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/knowledge-base');

export type CorpusDocument = { file: string; language: 'de' | 'en'; title: string; content: string };

/** The small German + English corpus under test/fixtures/knowledge-base (first line = title). */
export function loadCorpus(language?: 'de' | 'en'): CorpusDocument[] {
  return readdirSync(corpusDir)
    .filter((file) => /^(de|en)-.*\.md$/.test(file) && (!language || file.startsWith(`${language}-`)))
    .sort()
    .map((file) => {
      const [title, ...rest] = readFileSync(path.join(corpusDir, file), 'utf8').split('\n');
      return { file, language: file.slice(0, 2) as 'de' | 'en', title: title!.trim(), content: rest.join('\n').trim() };
    });
}

/** Runs every queued knowledge-base job now, through the real processor; returns how many ran. */
export function runKnowledgeBaseJobs(ctx: TestContext): Promise<number> {
  return ctx.queue.runPending<KbProcessJob>(KB_PROCESS_QUEUE, async (data, job) => {
    await ctx.internals.kbProcessor.process(data.documentId, job.id);
  });
}
