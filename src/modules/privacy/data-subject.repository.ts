import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { callsInBatches, toCall, WITHOUT_FREE_TEXT_OUTCOMES, type Call } from '../calls/call.repository.js';
import { CONTACT_COLUMNS, toContact, type Contact, type ContactRow } from '../contacts/contact.repository.js';
import { literalLike, phoneVariants, type ErasureCounts } from './data-subject.rules.js';
import type { DataSubjectIdentifier } from './data-subject.schemas.js';

/** A person as found in one organization: their contacts and every number and address they carry. */
export type Subject = {
  organizationId: string;
  agentIds: string[];
  contacts: ContactRow[];
  /** Every stored form of every number of the person (phoneVariants). */
  phoneForms: string[];
  /** Lower case. */
  emails: string[];
};

export type ErasureRow = ErasureCounts & {
  id: string;
  organization_id: string;
  completed_at: Date | null;
};

const ERASURE_COLUMNS = [
  'id',
  'organization_id',
  'contacts',
  'calls',
  'webhook_deliveries',
  'idempotency_records',
  'completed_at',
];

/** What an erased call keeps: id, agent, duration, done, timestamps and statistics. */
const ERASED_CALL_FIELDS = `customer_name = NULL, customer_request = NULL, phone_number = NULL, call_summary = NULL,
  transcript = NULL, audio_file_url = NULL, note = NULL, extracted_data = ${WITHOUT_FREE_TEXT_OUTCOMES},
  is_purged = true, purged_at = :now, updated_at = :now`;

/** The personal fields of a stored call.completed body, emptied. */
const ERASED_EVENT_CALL = JSON.stringify({
  customer_name: null,
  customer_request: null,
  phone_number: null,
  call_summary: null,
  transcript: null,
});

/**
 * Finding, exporting and erasing one person's data in an organization. Every query is scoped by the
 * organization; calls are found through their agents' (agent_id, phone_number) index, stored
 * webhook bodies through the events_call_phone_number index.
 */
export class DataSubjectRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  with(trx: Knex.Transaction): DataSubjectRepository {
    return new DataSubjectRepository(trx);
  }

  /** The person's contacts, and the numbers and addresses of the identifier and of those contacts. */
  async resolve(organizationId: string, identifier: DataSubjectIdentifier): Promise<Subject> {
    const agents: { id: string }[] = await this.db('agents').where({ organization_id: organizationId }).select('id');
    const contacts = this.db('contacts').where({ organization_id: organizationId }).select(CONTACT_COLUMNS);
    if (identifier.kind === 'contact_id') contacts.where({ id: identifier.value });
    else if (identifier.kind === 'email') contacts.whereRaw('lower(email) = ?', [identifier.value]);
    else
      contacts.where((q) =>
        q
          .where({ phone_number: identifier.value })
          .orWhere({ mobile_number: identifier.value })
          .orWhere({ landline_number: identifier.value }),
      );
    const rows: ContactRow[] = await contacts.orderBy([{ column: 'created_at' }, { column: 'id' }]);
    const phones = new Set<string>(identifier.kind === 'phone_number' ? [identifier.value] : []);
    const emails = new Set<string>(identifier.kind === 'email' ? [identifier.value] : []);
    for (const row of rows) {
      for (const n of [row.phone_number, row.mobile_number, row.landline_number]) if (n) phones.add(n);
      if (row.email) emails.add(row.email.toLowerCase());
    }
    return {
      organizationId,
      agentIds: agents.map((a) => a.id),
      contacts: rows,
      phoneForms: [...new Set([...phones].flatMap(phoneVariants))],
      emails: [...emails],
    };
  }

  exportContacts(subject: Subject): Contact[] {
    return subject.contacts.map(toContact);
  }

  /** The person's calls with every field, oldest first, in batches of at most `maxBytes` of text. */
  async *exportCalls(subject: Subject, maxBytes: number): AsyncGenerator<Call[]> {
    if (subject.agentIds.length === 0 || subject.phoneForms.length === 0) return;
    for await (const rows of callsInBatches(this.db, () => this.callsOf(subject, 'c'), 'asc', maxBytes))
      yield rows.map(toCall);
  }

  async countCalls(subject: Subject): Promise<number> {
    if (subject.agentIds.length === 0 || subject.phoneForms.length === 0) return 0;
    const row = await this.callsOf(subject, 'c').count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  async countWebhookBodies(subject: Subject): Promise<number> {
    if (subject.phoneForms.length === 0) return 0;
    const row = await this.eventsOf(subject).count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  async countIdempotencyRecords(subject: Subject): Promise<number> {
    const query = this.idempotencyOf(subject);
    if (!query) return 0;
    const row = await query.count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  /** Removes the personal fields of up to `limit` of the person's calls; returns how many. */
  async eraseCallBatch(subject: Subject, now: Date, limit: number): Promise<number> {
    if (subject.agentIds.length === 0 || subject.phoneForms.length === 0) return 0;
    const { rowCount } = await this.db.raw(
      `WITH batch AS (
         SELECT id FROM calls
          WHERE organization_id = :org AND agent_id = ANY(:agents::uuid[]) AND phone_number = ANY(:phones::text[])
          LIMIT :limit FOR UPDATE
       )
       UPDATE calls c SET ${ERASED_CALL_FIELDS} FROM batch WHERE c.id = batch.id`,
      { org: subject.organizationId, agents: subject.agentIds, phones: subject.phoneForms, limit, now },
    );
    return rowCount ?? 0;
  }

  /** Empties the personal fields of up to `limit` stored call.completed bodies of the person. */
  async redactWebhookBodyBatch(subject: Subject, limit: number): Promise<number> {
    if (subject.phoneForms.length === 0) return 0;
    const { rowCount } = await this.db.raw(
      `WITH batch AS (
         SELECT id FROM events
          WHERE organization_id = :org AND type = 'call.completed'
            AND (payload->'call'->>'phone_number') = ANY(:phones::text[])
          LIMIT :limit FOR UPDATE
       )
       UPDATE events e SET payload = jsonb_set(e.payload, '{call}', (e.payload->'call') || :erased::jsonb
              -- the free-text outcomes, as on the call (the typed ones stay)
              || CASE WHEN e.payload->'call'->'extracted_data' IS NOT NULL THEN jsonb_build_object('extracted_data',
                   (e.payload->'call'->'extracted_data') - ARRAY(
                     SELECT f->>'name' FROM agents fa, jsonb_array_elements(fa.analysis_fields) f
                      WHERE fa.id = (e.payload->'call'->>'agent_id')::uuid AND f->>'type' = 'string'))
                 ELSE '{}'::jsonb END)
         FROM batch WHERE e.id = batch.id`,
      { org: subject.organizationId, phones: subject.phoneForms, limit, erased: ERASED_EVENT_CALL },
    );
    return rowCount ?? 0;
  }

  /** Deletes up to `limit` stored idempotent answers that contain the person. */
  async deleteIdempotencyBatch(subject: Subject, limit: number): Promise<number> {
    const query = this.idempotencyOf(subject);
    if (!query) return 0;
    const batch = query.select('credential', 'idempotency_key').limit(limit).forUpdate().skipLocked();
    return this.db('idempotency_keys').whereIn(['credential', 'idempotency_key'], batch).delete();
  }

  async deleteContacts(subject: Subject): Promise<number> {
    if (subject.contacts.length === 0) return 0;
    return this.db('contacts')
      .where({ organization_id: subject.organizationId })
      .whereIn(
        'id',
        subject.contacts.map((c) => c.id),
      )
      .delete();
  }

  /** The running erasure of this person, created when there is none. */
  async startOrResume(organizationId: string, subjectHash: string, now: Date): Promise<ErasureRow> {
    const [created]: ErasureRow[] = await this.db('data_subject_erasures')
      .insert({ organization_id: organizationId, subject_hash: subjectHash, created_at: now, updated_at: now })
      .onConflict(this.db.raw('(organization_id, subject_hash) WHERE completed_at IS NULL'))
      .ignore()
      .returning(ERASURE_COLUMNS);
    return created ?? (await this.findRunning(organizationId, subjectHash))!;
  }

  async findRunning(organizationId: string, subjectHash: string): Promise<ErasureRow | undefined> {
    return this.db('data_subject_erasures')
      .where({ organization_id: organizationId, subject_hash: subjectHash })
      .whereNull('completed_at')
      .first(ERASURE_COLUMNS);
  }

  async lockErasure(id: string): Promise<ErasureRow | undefined> {
    return this.db('data_subject_erasures').where({ id }).forUpdate().first(ERASURE_COLUMNS);
  }

  async addCounts(id: string, counts: Partial<ErasureCounts>, now: Date): Promise<void> {
    const increments = Object.fromEntries(
      Object.entries(counts).map(([column, n]) => [column, this.db.raw('?? + ?', [column, n])]),
    );
    await this.db('data_subject_erasures')
      .where({ id })
      .update({ ...increments, updated_at: now });
  }

  /** Completes the erasure; its identifier hash goes. */
  async complete(id: string, contacts: number, now: Date): Promise<ErasureRow> {
    const [row]: ErasureRow[] = await this.db('data_subject_erasures')
      .where({ id })
      .update({
        contacts: this.db.raw('contacts + ?', [contacts]),
        subject_hash: null,
        completed_at: now,
        updated_at: now,
      })
      .returning(ERASURE_COLUMNS);
    return row!;
  }

  private callsOf(subject: Subject, alias: string): Knex.QueryBuilder {
    return this.db(`calls as ${alias}`)
      .where(`${alias}.organization_id`, subject.organizationId)
      .whereIn(`${alias}.agent_id`, subject.agentIds)
      .whereIn(`${alias}.phone_number`, subject.phoneForms);
  }

  private eventsOf(subject: Subject): Knex.QueryBuilder {
    return this.db('events')
      .where({ organization_id: subject.organizationId, type: 'call.completed' })
      .whereRaw(`(payload->'call'->>'phone_number') = ANY(?::text[])`, [subject.phoneForms]);
  }

  /**
   * Stored answers of the organization's requests (or, for callers that reach several organizations,
   * of its members' credentials) whose body names one of the person's numbers (as a JSON string),
   * addresses or contact ids.
   */
  private idempotencyOf(subject: Subject): Knex.QueryBuilder | undefined {
    const exact = [
      ...subject.phoneForms.map((p) => `%"${literalLike(p)}"%`),
      ...subject.contacts.map((c) => `%${c.id}%`),
    ];
    const caseless = subject.emails.map((e) => `%"${literalLike(e)}"%`);
    if (exact.length === 0 && caseless.length === 0) return undefined;
    const org = subject.organizationId;
    const members = this.db('memberships').where({ organization_id: org }).select('user_id');
    const credentials = this.db('memberships')
      .where({ organization_id: org })
      .select(this.db.raw(`'user:' || user_id::text`))
      .unionAll((q) => q.from('api_keys').whereIn('created_by', members).select(this.db.raw(`'key:' || id::text`)));
    return this.db('idempotency_keys')
      .whereNotNull('response_body')
      .where((q) =>
        q
          .where({ organization_id: org })
          .orWhere((n) => n.whereNull('organization_id').whereIn('credential', credentials)),
      )
      .where((q) => {
        if (exact.length > 0) q.orWhereRaw('response_body LIKE ANY(?::text[])', [exact]);
        if (caseless.length > 0) q.orWhereRaw('response_body ILIKE ANY(?::text[])', [caseless]);
      });
  }
}
