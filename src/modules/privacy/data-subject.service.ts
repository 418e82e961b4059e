import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { noteAuditResource } from '../../audit/request-context.js';
import {
  assertEveryAgent,
  assertPermission,
  reachableOrganizations,
  type AuthContext,
} from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { inTransaction, type Db } from '../../db/knex.js';
import { NotFoundError } from '../../errors/index.js';
import type { StreamedBody } from '../../api/streamed-body.js';
import type { EventRecorder } from '../../events/event-recorder.js';
import { parseBody } from '../../api/validate.js';
import { EXPORT_BATCH_BYTES } from '../calls/call-export.js';
import type {
  DataSubjectRepository,
  ErasureRow,
  KbDocumentToReview,
  KeptCounts,
  Subject,
} from './data-subject.repository.js';
import { subjectHash, type ErasureCounts } from './data-subject.rules.js';
import {
  DataSubjectEraseRequestSchema,
  DataSubjectExportRequestSchema,
  identifierOf,
  type DataSubjectIdentifier,
} from './data-subject.schemas.js';
import { pick } from '../../db/pick.js';

type KeptRecords = { type: keyof KeptCounts; count: number; reason: string };

export type ErasureResult = {
  erasure_id: string | null;
  dry_run: boolean;
  erased: ErasureCounts;
  kb_documents_to_review: KbDocumentToReview[];
  kept: KeptRecords[];
};

/** Why erasure leaves these records of the person's numbers as they are. */
const KEPT_REASONS: Record<keyof KeptCounts, string> = {
  do_not_call:
    'The person objected to calls (UWG §7): the entry keeps the number from being called again. DELETE /v1/organization/{orgId}/do-not-call removes it',
  outbound_consent:
    'Proof of consent to calls, which UWG §7a requires for five years: deleted by a daily job once keep_until (five years after the last call to the number) has passed',
};

/** The kinds with records, in a fixed order. */
function keptRecords(counts: KeptCounts): KeptRecords[] {
  return (Object.keys(KEPT_REASONS) as (keyof KeptCounts)[])
    .filter((type) => counts[type] > 0)
    .map((type) => ({ type, count: counts[type], reason: KEPT_REASONS[type] }));
}

/** The request's audit entry: the erasure and its counts, never the identifier. */
function noteErasure(erasure: ErasureRow): ErasureRow {
  noteAuditResource({
    organizationId: erasure.organization_id,
    action: 'data_subject.erased',
    resourceType: 'data_subject_erasure',
    resourceId: erasure.id,
    details: { erasure_id: erasure.id, ...countsOf(erasure) },
  });
  return erasure;
}

/** Rows per batch: each batch is its own short transaction, so call intake never waits long. */
const BATCH_SIZE = 500;

function countsOf(row: ErasureRow): ErasureCounts {
  return pick(row, ['contacts', 'calls', 'webhook_deliveries', 'idempotency_records', 'test_cases', 'outbound_calls']);
}

/**
 * Data-subject rights (DSGVO Art. 15, 17, 20) for one person in one organization (privacy:write).
 * The transaction that completes an erasure is an audited one (`audited`), which writes the
 * request's audit row; the batches before it run on the plain `batchDb`, so the one audit entry
 * carries the final counts.
 */
export class DataSubjectService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly batchDb: Db,
    private readonly subjects: DataSubjectRepository,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
  ) {}

  /**
   * Everything stored about the person: contacts, calls with all fields, counts of other mentions.
   * The answer is one JSON object made while it is sent, the calls in batches bounded by bytes, so
   * a person with many long calls takes no more memory than one with a few.
   */
  async export(auth: AuthContext, organizationId: string, body: unknown): Promise<StreamedBody> {
    const orgId = this.authorize(auth, organizationId);
    assertEveryAgent(auth);
    const identifier = identifierOf(parseBody(DataSubjectExportRequestSchema, body));
    const subject = await this.subjects.resolve(orgId, identifier);
    const [callCount, webhookBodies, idempotencyRecords] = await Promise.all([
      this.subjects.countCalls(subject),
      this.subjects.countWebhookBodies(subject),
      this.subjects.countIdempotencyRecords(subject),
    ]);
    const contacts = this.subjects.exportContacts(subject);
    noteAuditResource({
      organizationId: orgId,
      action: 'data_subject.exported',
      resourceType: 'data_subject',
      details: { contacts: contacts.length, calls: callCount },
    });
    // The audit entry is written before the first byte (an audited transaction of its own): an export
    // that the client cuts short has still shown the person's data, and is recorded too.
    await this.audited.transaction(async () => undefined);
    const calls = this.subjects.exportCalls(subject, EXPORT_BATCH_BYTES);
    const [doNotCall, consents] = await Promise.all([
      this.subjects.exportDoNotCall(subject),
      this.subjects.exportConsents(subject),
    ]);
    const tail = {
      do_not_call: doNotCall,
      outbound_consents: consents,
      mentions: { webhook_deliveries: webhookBodies, idempotency_records: idempotencyRecords },
      exported_at: this.clock.now().toISOString(),
    };
    // The fields in the order of DataSubjectExportSchema, as res.json would write the whole object.
    async function* chunks(): AsyncGenerator<string> {
      // The head goes with the first batch: a failure in its query is still an error answer.
      let out = `{"identifier":${JSON.stringify(identifier)},"contacts":${JSON.stringify(contacts)},"calls":[`;
      let first = true;
      for await (const batch of calls) {
        for (const call of batch) {
          out += `${first ? '' : ','}${JSON.stringify(call)}`;
          first = false;
        }
        yield out;
        out = '';
      }
      yield `${out}],${JSON.stringify(tail).slice(1)}`;
    }
    // Nothing is held between batches: a response that ends early just stops pulling.
    return { chunks: chunks(), close: () => undefined };
  }

  /**
   * Erases the person: calls (found by number, address or full name) lose their personal fields and
   * every outcome but enum and boolean ones, stored webhook bodies are redacted alike, stored
   * idempotent answers that contain them are deleted, saved test cases lose their number and
   * greeting, outbound call jobs to them are deleted (a scheduled one is never dialled), then (with the
   * audit entry and the data_subject.erased event, in one transaction) their contacts. Knowledge-base documents that mention them are listed, not changed; their numbers'
   * do-not-call entries and consent records are kept (their objection, and proof the law requires),
   * and the answer says so (`kept`). An interrupted
   * erasure resumes under the same id; a person erased before gets a new erasure with zero counts.
   */
  async erase(auth: AuthContext, organizationId: string, body: unknown): Promise<ErasureResult> {
    const orgId = this.authorize(auth, organizationId);
    assertEveryAgent(auth);
    const input = parseBody(DataSubjectEraseRequestSchema, body);
    const identifier = identifierOf(input);
    const subject = await this.subjects.resolve(orgId, identifier);
    if (input.dry_run) return this.dryRun(subject, identifier);
    const erasure = await this.subjects.startOrResume(orgId, subjectHash(orgId, identifier), this.clock.now());
    // Bodies first: they are found through the calls they belong to, which the next step empties.
    await this.inBatches(erasure.id, 'webhook_deliveries', (s) => s.redactWebhookBodyBatch(subject, BATCH_SIZE));
    await this.inBatches(erasure.id, 'calls', (s) => s.eraseCallBatch(subject, this.clock.now(), BATCH_SIZE));
    await this.inBatches(erasure.id, 'idempotency_records', (s) => s.deleteIdempotencyBatch(subject, BATCH_SIZE));
    await this.inBatches(erasure.id, 'test_cases', (s) => s.eraseTestCaseBatch(subject, this.clock.now(), BATCH_SIZE));
    await this.inBatches(erasure.id, 'outbound_calls', (s) => s.eraseOutboundBatch(subject, BATCH_SIZE));
    const done = await this.complete(erasure.id, subject);
    const [kbDocuments, kept] = await Promise.all([
      this.subjects.kbDocumentsToReview(subject),
      this.subjects.countKept(subject),
    ]);
    return {
      erasure_id: done.id,
      dry_run: false,
      erased: countsOf(done),
      kb_documents_to_review: kbDocuments,
      kept: keptRecords(kept),
    };
  }

  private async dryRun(subject: Subject, identifier: DataSubjectIdentifier): Promise<ErasureResult> {
    const [calls, webhookBodies, idempotencyRecords, testCases, outboundCalls, kbDocuments, running, kept] =
      await Promise.all([
        this.subjects.countCalls(subject),
        this.subjects.countWebhookBodies(subject),
        this.subjects.countIdempotencyRecords(subject),
        this.subjects.countTestCases(subject),
        this.subjects.countOutboundCalls(subject),
        this.subjects.kbDocumentsToReview(subject),
        this.subjects.findRunning(subject.organizationId, subjectHash(subject.organizationId, identifier)),
        this.subjects.countKept(subject),
      ]);
    return {
      erasure_id: running?.id ?? null,
      dry_run: true,
      erased: {
        contacts: subject.contacts.length,
        calls,
        webhook_deliveries: webhookBodies,
        idempotency_records: idempotencyRecords,
        test_cases: testCases,
        outbound_calls: outboundCalls,
      },
      kb_documents_to_review: kbDocuments,
      kept: keptRecords(kept),
    };
  }

  /** Runs `batch` until it finds nothing more, each run with its count in one short transaction. */
  private async inBatches(
    erasureId: string,
    counter: keyof ErasureCounts,
    batch: (subjects: DataSubjectRepository) => Promise<number>,
  ): Promise<void> {
    for (;;) {
      const n = await inTransaction(this.batchDb, async (trx) => {
        const found = await batch(this.subjects.with(trx));
        if (found > 0) await this.subjects.with(trx).addCounts(erasureId, { [counter]: found }, this.clock.now());
        return found;
      });
      if (n < BATCH_SIZE) return;
      await yieldToEventLoop();
    }
  }

  /** Contacts, completion, audit entry and event together; a concurrent completion is answered as it left it. */
  private async complete(erasureId: string, subject: Subject): Promise<ErasureRow> {
    return this.audited.transaction(async (trx) => {
      const subjects = this.subjects.with(trx);
      const current = await subjects.lockErasure(erasureId);
      if (!current) throw new NotFoundError('Erasure');
      // Completed by a concurrent request for the same person: this request's entry names it too.
      if (current.completed_at) return noteErasure(current);
      const now = this.clock.now();
      const done = await subjects.complete(erasureId, await subjects.deleteContacts(subject), now);
      const erased = countsOf(done);
      await this.events.record(trx, {
        organization_id: subject.organizationId,
        agent_id: null,
        type: 'data_subject.erased',
        payload: {
          event: 'data_subject.erased',
          erasure_id: done.id,
          organization_id: subject.organizationId,
          erased,
          erased_at: now.toISOString(),
        },
      });
      return noteErasure(done);
    });
  }

  /** 404 for an organization out of reach, 403 without privacy:write there. */
  private authorize(auth: AuthContext, organizationId: string): string {
    assertPermission(auth, 'privacy:write');
    const id = organizationId.toLowerCase();
    if (!reachableOrganizations(auth).includes(id)) throw new NotFoundError('Organization');
    assertPermission(auth, 'privacy:write', id);
    return id;
  }
}
