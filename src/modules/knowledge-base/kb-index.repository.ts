import type { Knex } from 'knex';
import type { AgentRef } from '../../auth/auth-context.js';
import type { Db } from '../../db/knex.js';
import { preparedSql, runPrepared } from '../../db/prepared.js';
import {
  AGENT_LANGUAGE_SQL,
  andQuery,
  candidateShare,
  documentSearchConfig,
  orQuery,
  TS_CONFIGS,
  type TsConfig,
} from './text-search.js';

export type ClaimedDocument = {
  id: string;
  organization_id: string;
  agent_id: string | null;
  title: string;
  scope: 'agent' | 'organization';
  content: string | null;
  content_version: number;
  ts_config: TsConfig;
  source_type: string;
  source: { media_type: string } | null;
};

export type ProcessingOutcome = { chunks: string[] } | { status: 'error' | 'failed'; message: string; reason?: string };

export type SearchHit = {
  chunk_id: string;
  document_id: string;
  document_title: string;
  scope: 'agent' | 'organization';
  position: number;
  chunk_index: number;
  content: string;
  score: number;
};

const INSERT_BATCH = 200;
/** Constants, not input: safe to inline. */
const CONFIG_LIST = TS_CONFIGS.map((c) => `'${c}'`).join(', ');
/** A chunk's configuration as an index into the probes' arrays of per-configuration questions. */
const CONFIG_OF_CHUNK = `array_position(ARRAY[${CONFIG_LIST}], c.ts_config)`;

/**
 * How many of an organization's first chunks (in document and position order) a question's probes
 * are tried on: a probe whose query matches at least half of them is taken to be common.
 */
const SAMPLE = 16;
/** A common probe reads at most this many shares of the organization's chunks in order before the index. */
const READ_SHARES = 4;
/** `ts_rank` normalization: divided by 1 + the logarithm of the chunk's length (1), then rank / (rank + 1) (32). */
const RANK_NORMALIZATION = '1 | 32';

/**
 * A probe brings at most a share of the visible chunks that match `p.query` and the question of the
 * chunk's own configuration (`all_query` or `any_query`), each with its score. Two ways to them:
 *
 * - `fromIndex`: the GIN index, the first matches in storage order. It has no early stop: the bitmap
 *   of every matching chunk is built before the limit applies (see `npm run bench -- kb`),
 *   which is nothing for a rare word.
 * - `inOrder`, for a probe the sample found common: the organization's chunks in document and
 *   position order (an index in that order), at most `READ_SHARES` shares of them, stopping when the
 *   share is full: a few hundred rows. Only a full share is the probe's answer; otherwise the index
 *   is read as well, so a word is never missed because its chunks came late in that order.
 */
function fromIndex(question: 'all_query' | 'any_query'): string {
  return `SELECT c.id, ts_rank(c.tsv, p.any_query[${CONFIG_OF_CHUNK}], ${RANK_NORMALIZATION}) AS score
    -- OFFSET 0 keeps the GIN scan of the probe as the driver, read lazily until the share is full.
    FROM (SELECT c.id, c.tsv, c.ts_config, c.document_id FROM kb_chunks c WHERE c.tsv @@ p.query AND c.organization_id = p.organization_id OFFSET 0) c
   WHERE c.tsv @@ p.${question}[${CONFIG_OF_CHUNK}] AND c.document_id IN (SELECT id FROM visible)
   LIMIT p.share`;
}

function inOrder(question: 'all_query' | 'any_query'): string {
  return `SELECT c.id, ts_rank(c.tsv, p.any_query[${CONFIG_OF_CHUNK}], ${RANK_NORMALIZATION}) AS score
    FROM (SELECT c.id, c.tsv, c.ts_config, c.document_id, c.position FROM kb_chunks c
           WHERE c.organization_id = p.organization_id
           ORDER BY c.document_id, c.position LIMIT ${READ_SHARES} * p.share) c
   WHERE c.tsv @@ p.query AND c.tsv @@ p.${question}[${CONFIG_OF_CHUNK}]
     AND c.document_id IN (SELECT id FROM visible)
   ORDER BY c.document_id, c.position
   LIMIT p.share`;
}

/** See `search`: parsed and planned once per connection. */
const SEARCH_SQL = preparedSql(
  'kb_search',
  `-- The values reach the rest only through this CTE, so that PostgreSQL estimates every execution
   -- alike and keeps one generic plan: planning it takes longer (about 5 ms) than running it, and
   -- plans made for each question's values ran no faster (the read paths are chosen as it runs).
   WITH params AS MATERIALIZED (
     SELECT :organizationId::uuid AS organization_id, :agentId::uuid AS agent_id, :share::integer AS share,
            :topK::integer AS top_k, :anyQuery::text AS any_query, :allQuery::text AS all_query,
            :words::text AS words, :withAll::boolean AS with_all
   ),
   q AS MATERIALIZED (
     SELECT cfg, i, to_tsquery(cfg::regconfig, p.any_query) AS any_query, to_tsquery(cfg::regconfig, p.all_query) AS all_query
       FROM params p, unnest(ARRAY[${CONFIG_LIST}]) WITH ORDINALITY AS cfg(cfg, i)
   ),
   sample AS MATERIALIZED (
     SELECT c.tsv FROM params p, LATERAL (
       SELECT c.tsv FROM kb_chunks c WHERE c.organization_id = p.organization_id
        ORDER BY c.document_id, c.position LIMIT ${SAMPLE}) c
   ),
   -- Each probe carries what its reads need (see inOrder and fromIndex), the question's two forms
   -- among them as arrays by configuration, in the order of CONFIG_LIST.
   probes AS MATERIALIZED (
     SELECT p.n, p.query, (SELECT count(*) FROM sample s WHERE s.tsv @@ p.query) * 2 >= ${SAMPLE} AS common,
            params.organization_id, params.share,
            (SELECT array_agg(q.any_query ORDER BY q.i) FROM q) AS any_query,
            (SELECT array_agg(q.all_query ORDER BY q.i) FROM q) AS all_query
       FROM params, (SELECT p.n, string_agg(DISTINCT '(' || p.query::text || ')', ' | ')::tsquery AS query
               FROM (SELECT 0::bigint AS n, all_query AS query FROM q WHERE (SELECT with_all FROM params)
                     UNION ALL
                     SELECT w.n, to_tsquery(cfg::regconfig, w.word)
                       FROM unnest(string_to_array((SELECT words FROM params), ' ')) WITH ORDINALITY AS w(word, n),
                            unnest(ARRAY[${CONFIG_LIST}]) AS cfg) p
              WHERE numnode(p.query) > 0
              GROUP BY p.n) p
   ),
   visible AS MATERIALIZED (
     SELECT d.id, d.title, d.scope
       FROM kb_documents d
       JOIN params p ON p.organization_id = d.organization_id
      WHERE d.status = 'ready'
        AND (d.agent_id = p.agent_id OR EXISTS (
              SELECT 1 FROM kb_document_grants g WHERE g.document_id = d.id AND g.agent_id = p.agent_id))
   ),
   -- The all-words probe first: when it fills its share, every word is that common, and the
   -- words' own probes would only add more of the same kind of chunks (see search()).
   all_read AS MATERIALIZED (
     SELECT found.id, found.score FROM probes p CROSS JOIN LATERAL (${inOrder('all_query')}) found WHERE p.n = 0 AND p.common
   ),
   all_words AS MATERIALIZED (
     SELECT r.id, r.score FROM all_read r, params WHERE (SELECT count(*) FROM all_read) >= params.share
     UNION ALL
     SELECT found.id, found.score FROM probes p CROSS JOIN LATERAL (${fromIndex('all_query')}) found
      WHERE p.n = 0 AND (SELECT count(*) FROM all_read) < p.share
   ),
   each_read AS MATERIALIZED (
     SELECT p.n, found.id, found.score FROM probes p CROSS JOIN LATERAL (${inOrder('any_query')}) found
      WHERE p.n > 0 AND p.common AND (SELECT count(*) FROM all_words) < p.share
   ),
   -- The words whose read in order filled their share; the others are taken from the index alone.
   each_filled AS MATERIALIZED (
     SELECT r.n FROM each_read r, params GROUP BY r.n, params.share HAVING count(*) >= params.share
   ),
   each_word AS MATERIALIZED (
     SELECT id, score FROM each_read WHERE n IN (SELECT n FROM each_filled)
     UNION ALL
     SELECT found.id, found.score FROM probes p CROSS JOIN LATERAL (${fromIndex('any_query')}) found
      WHERE p.n > 0 AND (SELECT count(*) FROM all_words) < p.share AND p.n NOT IN (SELECT n FROM each_filled)
   ),
   -- Ranked as read (the score is the chunk's, whichever probe brought it); only the top ones are read again.
   ranked AS MATERIALIZED (
     SELECT k.id, k.score FROM (SELECT id, score FROM all_words UNION SELECT id, score FROM each_word) k
      ORDER BY k.score DESC, k.id
      LIMIT (SELECT top_k FROM params)
   )
   SELECT c.id AS chunk_id, c.document_id, v.title AS document_title, v.scope, c.position,
          c.position AS chunk_index, c.content, r.score
     FROM ranked r
     JOIN kb_chunks c ON c.id = r.id
     JOIN visible v ON v.id = c.document_id
    ORDER BY r.score DESC, r.id`,
);

/**
 * Which document a background job may take for its work, tracked in `column` (`status` for
 * processing, `sync_status` for a web source's sync): a `pending` one, or one left `working` by
 * this same job (pg-boss retries an expired job under its id) or by a worker silent since
 * `staleBefore`. For `.andWhere` of a conditional UPDATE of `kb_documents as d`.
 */
export function claimable(column: 'status' | 'sync_status', working: string, jobId: string, staleBefore: Date) {
  return (state: Knex.QueryBuilder) =>
    state
      .where(`d.${column}`, 'pending')
      .orWhere((stuck) =>
        stuck
          .where(`d.${column}`, working)
          .andWhere((who) =>
            who.where('d.processing_job_id', jobId).orWhere('d.processing_started_at', '<=', staleBefore),
          ),
      );
}

/**
 * What a claim returns: the document's identity and scope, its own `columns`, and what picks its
 * search configuration (its language, else its agent's: `documentSearchConfig`).
 */
export function claimedColumns(db: Db | Knex.Transaction, columns: string[]) {
  return [
    'd.id',
    'd.organization_id',
    'd.agent_id',
    'd.title',
    'd.scope',
    ...columns,
    'd.language',
    db.raw(AGENT_LANGUAGE_SQL),
  ];
}

/** The full-text index: what the processing pipeline writes and what search reads. */
export class KnowledgeBaseIndexRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): KnowledgeBaseIndexRepository {
    return new KnowledgeBaseIndexRepository(trx);
  }

  /**
   * Takes a document for processing (`claimable`): a single conditional UPDATE, so two workers
   * never both take it.
   */
  async claim(documentId: string, jobId: string, now: Date, staleBefore: Date): Promise<ClaimedDocument | undefined> {
    const [row] = await this.db('kb_documents as d')
      .where('d.id', documentId)
      // Chunks brought by the client are never overwritten by the pipeline.
      .andWhere('d.chunk_source', 'pipeline')
      .andWhere(claimable('status', 'processing', jobId, staleBefore))
      .update({ status: 'processing', processing_started_at: now, processing_job_id: jobId, updated_at: now })
      .returning(claimedColumns(this.db, ['d.content', 'd.content_version', 'd.source_type', 'd.source']));
    return row && documentSearchConfig(row);
  }

  /**
   * Ends processing, but only if the document is still in `processing` at the version that was
   * read: an edit in the meantime (new version, back to pending) wins, and its own job rebuilds it.
   * False when nothing was written. Call it on `with(trx)`: the row lock holds until the caller's
   * transaction ends.
   */
  async finish(claimed: ClaimedDocument, outcome: ProcessingOutcome, now: Date): Promise<boolean> {
    const current = await this.db('kb_documents')
      .where({ id: claimed.id, organization_id: claimed.organization_id })
      .forUpdate()
      .first('status', 'content_version');
    if (!current || current.status !== 'processing' || current.content_version !== claimed.content_version)
      return false;
    const done = { processing_started_at: null, processing_job_id: null, updated_at: now };
    // An uploaded file's bytes are kept only until its text is extracted.
    if (claimed.source_type === 'file') await this.db('kb_file_parts').where({ document_id: claimed.id }).delete();
    if ('chunks' in outcome) {
      await this.replaceChunks(claimed, outcome.chunks, now);
      await this.db('kb_documents')
        .where({ id: claimed.id })
        .update({
          ...done,
          status: 'ready',
          chunk_count: outcome.chunks.length,
          error_message: null,
          failure_reason: null,
        });
    } else {
      await this.db('kb_chunks').where({ document_id: claimed.id }).delete();
      await this.db('kb_documents')
        .where({ id: claimed.id })
        .update({
          ...done,
          status: outcome.status,
          chunk_count: 0,
          error_message: outcome.message,
          failure_reason: outcome.reason ?? null,
        });
    }
    return true;
  }

  /** The bytes of an uploaded file, waiting for extraction; undefined once they are gone. */
  async fileBytes(documentId: string): Promise<Buffer | undefined> {
    const parts: { data: Buffer }[] = await this.db('kb_file_parts')
      .where({ document_id: documentId })
      .orderBy('part')
      .select('data');
    return parts.length === 0 ? undefined : Buffer.concat(parts.map((p) => p.data));
  }

  async sourceTypeOf(documentId: string): Promise<string | undefined> {
    const row = await this.db('kb_documents').where({ id: documentId }).first('source_type');
    return row?.source_type;
  }

  private async replaceChunks(claimed: ClaimedDocument, chunks: string[], now: Date): Promise<void> {
    await this.db('kb_chunks').where({ document_id: claimed.id }).delete();
    for (let start = 0; start < chunks.length; start += INSERT_BATCH) {
      const rows = chunks.slice(start, start + INSERT_BATCH).map((content, i) => ({
        document_id: claimed.id,
        organization_id: claimed.organization_id,
        position: start + i,
        content,
        ts_config: claimed.ts_config,
        tsv: this.db.raw('to_tsvector(?::regconfig, ?)', [claimed.ts_config, content]),
        created_at: now,
      }));
      await this.db('kb_chunks').insert(rows);
    }
  }

  /** Documents whose processing looks abandoned, or that waited in pending too long. */
  async findStale(staleBefore: Date, limit = 500): Promise<string[]> {
    const rows: { id: string }[] = await this.db('kb_documents')
      .where('chunk_source', 'pipeline')
      .andWhereNot('source_type', 'url')
      .andWhere((stale) =>
        stale
          .where((q) => q.where('status', 'processing').andWhere('processing_started_at', '<=', staleBefore))
          .orWhere((q) => q.where('status', 'pending').andWhere('updated_at', '<=', staleBefore)),
      )
      .orderBy('updated_at')
      .limit(limit)
      .select('id');
    return rows.map((r) => r.id);
  }

  /**
   * Ranked full-text search over the ready documents the agent sees. Each chunk is matched and
   * ranked with the question parsed by its own configuration (the stemmer it was indexed with).
   *
   * Bounded: only candidates are ranked. There is one probe per term and, for several terms, one
   * for all terms together; each brings at most `candidateShare(terms)` matching chunks, so at most
   * MAX_RANKED_CHUNKS are ranked. A chunk with a term that occurs in fewer chunks than a share is
   * always ranked; a chunk matching every term is ranked as long as fewer than a share do. When
   * nothing is that common, every matching chunk is ranked. Which chunks of a common term are
   * ranked is the first share found (see `inOrder` and `fromIndex`), the same for the same question.
   * When the all-terms probe fills its share, every term occurs in at least a share of the chunks,
   * so the terms' own probes are skipped: they could only add more chunks of the same kind.
   * Chunks are scored as the probes find them; only the top `topK` are read again, with their
   * documents' titles. Each probe query is the OR of its configurations' queries, so one index scan
   * serves all.
   */
  async search(agent: AgentRef, terms: string[], topK: number): Promise<SearchHit[]> {
    if (terms.length === 0) return [];
    const { rows } = await runPrepared(this.db, SEARCH_SQL, {
      anyQuery: orQuery(terms),
      allQuery: andQuery(terms),
      words: terms.join(' '),
      withAll: terms.length > 1,
      share: candidateShare(terms),
      organizationId: agent.organization_id,
      agentId: agent.id,
      topK,
    });
    return (rows as SearchHit[]).map((row) => ({ ...row, score: Number(row.score) }));
  }
}
