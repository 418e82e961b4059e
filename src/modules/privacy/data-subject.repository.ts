import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { statementsOn } from '../../db/replicas.js';
import { callsInBatches, toCall, type Call } from '../calls/call.repository.js';
import { CONTACT_COLUMNS, toContact, type Contact, type ContactRow } from '../contacts/contact.repository.js';
import {
  CONSENT_COLUMNS,
  toConsentRecord,
  toDoNotCall,
  type ConsentRow,
  type DoNotCallRow,
} from '../outbound/outbound.repository.js';
import { fullNamesOf, literalLike, nameWordsOf, phoneVariants, type ErasureCounts } from './data-subject.rules.js';
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
  /** Their contacts' full names (fullNamesOf). */
  fullNames: string[];
  /** ILIKE patterns of the person's addresses and full names, looked for in free text. */
  textPatterns: string[];
  /** Case-insensitive regular expressions (whole words) of the person's full names and name words, looked for in a known caller's greeting. */
  greetingPatterns: string[];
};

/** A knowledge-base document that mentions the person: listed for a person to review, never changed. */
export type KbDocumentToReview = { id: string; agent_id: string | null; title: string };

/** Records of the person's numbers that erasure leaves as they are, by kind. */
export type KeptCounts = { do_not_call: number; outbound_consent: number };

/** At most this many documents are listed (oldest first); an organization's review starts from them. */
export const KB_REVIEW_LIMIT = 100;

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
  'test_cases',
  'outbound_calls',
  'completed_at',
];

/**
 * Whether outcome `key` = `value` (jsonb) of a call of `agent` survives an erasure: only a value of a
 * field the agent declares now as `boolean`, or as `enum` with that value listed. An allow-list, so
 * that keys no longer declared and date, number and string outcomes all go.
 */
const KEPT_OUTCOME = (agent: string, key: string, value: string) =>
  `EXISTS (SELECT 1 FROM agents fa, jsonb_array_elements(fa.analysis_fields) f
            WHERE fa.id = ${agent} AND f->>'name' = ${key}
              AND ((f->>'type' = 'boolean' AND jsonb_typeof(${value}) = 'boolean')
                OR (f->>'type' = 'enum' AND f->'values' @> jsonb_build_array(${value}))))`;

/** `data` (an outcomes object, or anything else for none) as `jsonb_each` can read it. */
const OUTCOMES = (data: string) => `(CASE WHEN jsonb_typeof(${data}) = 'object' THEN ${data} ELSE '{}'::jsonb END)`;

/** The outcomes an erasure keeps (KEPT_OUTCOME). */
const ALLOWED_OUTCOMES = (data: string, agent: string) =>
  `COALESCE((SELECT jsonb_object_agg(d.key, d.value) FROM jsonb_each(${OUTCOMES(data)}) d
              WHERE ${KEPT_OUTCOME(agent, 'd.key', 'd.value')}), '{}'::jsonb)`;

/** An outcome the erasure removes mentions the person (`patterns`: a text[] parameter). */
const MENTIONED_IN_OUTCOMES = (data: string, agent: string, patterns: string) =>
  `EXISTS (SELECT 1 FROM jsonb_each(${OUTCOMES(data)}) d
            WHERE (d.value #>> '{}') ILIKE ANY(${patterns}) AND NOT ${KEPT_OUTCOME(agent, 'd.key', 'd.value')})`;

/** What an erased call keeps: id, agent, duration, done, enum and boolean outcomes, timestamps and statistics. */
const ERASED_CALL_FIELDS = `customer_name = NULL, customer_request = NULL, phone_number = NULL, call_summary = NULL,
  transcript = NULL, audio_file_url = NULL, note = NULL, extracted_data = ${ALLOWED_OUTCOMES('c.extracted_data', 'c.agent_id')},
  is_purged = true, purged_at = :now, updated_at = :now`;

/**
 * A call of the person (alias `c`, parameters :phones and :texts): by number, or by an address or full
 * name in a field the erasure empties. Nothing the erasure keeps is looked at, so an erased call
 * never matches again.
 */
const CALL_OF_SUBJECT = `(c.phone_number = ANY(:phones::text[])
  OR c.customer_name ILIKE ANY(:texts::text[]) OR c.customer_request ILIKE ANY(:texts::text[])
  OR c.call_summary ILIKE ANY(:texts::text[]) OR c.note ILIKE ANY(:texts::text[])
  OR ${MENTIONED_IN_OUTCOMES('c.extracted_data', 'c.agent_id', ':texts::text[]')}
  OR EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(c.transcript) = 'array' THEN c.transcript ELSE '[]' END) t
              WHERE t->>'text' ILIKE ANY(:texts::text[])))`;

const OWN_CALLS = `FROM calls c WHERE c.organization_id = :org AND c.agent_id = ANY(:agents::uuid[])`;

/**
 * The ids of the person's calls, found through indexes where there is one: the number through
 * (agent_id, phone_number), each address or name through the trigram index on call_search_text
 * (the calls' search text) and the trigram index on call_outcome_text (the outcomes' text), which
 * narrow before CALL_OF_SUBJECT decides on the few they find. Reading every call's transcript or
 * outcomes instead costs about a millisecond a call (a 5 kB transcript under ILIKE), minutes for a
 * large organization.
 */
function callIdsOf(subject: Subject): string {
  const searched = subject.textPatterns.flatMap((_, i) => [
    `call_search_text(c.customer_name, c.phone_number, c.customer_request, c.call_summary, c.note, c.transcript) ILIKE :text${i}`,
    `c.extracted_data <> '{}'::jsonb AND call_outcome_text(c.extracted_data) ILIKE :text${i}`,
  ]);
  const arms = [
    ...(subject.phoneForms.length > 0 ? [`SELECT c.id ${OWN_CALLS} AND c.phone_number = ANY(:phones::text[])`] : []),
    ...searched.map((condition) => `SELECT c.id ${OWN_CALLS} AND ${condition}`),
  ];
  return arms.join(' UNION ');
}

/** A stored call.completed body (alias `e`) that names the person in its text (as CALL_OF_SUBJECT). */
const EVENT_TEXT_OF_SUBJECT = `((e.payload->'call'->>'customer_name') ILIKE ANY(:texts::text[])
  OR (e.payload->'call'->>'customer_request') ILIKE ANY(:texts::text[])
  OR (e.payload->'call'->>'call_summary') ILIKE ANY(:texts::text[])
  OR (e.payload->'call'->>'transcript') ILIKE ANY(:texts::text[])
  OR ${MENTIONED_IN_OUTCOMES("e.payload->'call'->'extracted_data'", "(e.payload->'call'->>'agent_id')::uuid", ':texts::text[]')})`;

/** A stored call.completed body (alias `e`) that still holds something an erasure removes. */
const EVENT_NOT_ERASED = `((e.payload->'call'->>'phone_number') IS NOT NULL
  OR (e.payload->'call'->>'customer_name') IS NOT NULL OR (e.payload->'call'->>'customer_request') IS NOT NULL
  OR (e.payload->'call'->>'call_summary') IS NOT NULL OR (e.payload->'call'->>'transcript') IS NOT NULL
  OR EXISTS (SELECT 1 FROM jsonb_each(${OUTCOMES("e.payload->'call'->'extracted_data'")}) d
              WHERE NOT ${KEPT_OUTCOME("(e.payload->'call'->>'agent_id')::uuid", 'd.key', 'd.value')}))`;

const OWN_BODIES = `FROM events e WHERE e.organization_id = :org AND e.type = 'call.completed'`;

/**
 * The ids of the person's stored call.completed bodies, each way through an index: the body of each
 * of their calls (callIdsOf; events_call_id), a body with their number (events_call_phone_number),
 * and, read in full, the bodies whose agent was deleted (their calls went with it) that name them.
 * A body is the person's only while it still holds something to erase, so it never matches again.
 */
function eventIdsOf(subject: Subject): string {
  const arms = [
    ...(findsCalls(subject)
      ? [
          `SELECT e.id ${OWN_BODIES} AND (e.payload->'call'->>'id') IN (SELECT x.id::text FROM (${callIdsOf(subject)}) x)`,
        ]
      : []),
    ...(subject.phoneForms.length > 0
      ? [`SELECT e.id ${OWN_BODIES} AND (e.payload->'call'->>'phone_number') = ANY(:phones::text[])`]
      : []),
    ...(subject.textPatterns.length > 0
      ? [`SELECT e.id ${OWN_BODIES} AND e.agent_id IS NULL AND ${EVENT_TEXT_OF_SUBJECT}`]
      : []),
  ];
  return `e.id IN (${arms.join(' UNION ')}) AND ${EVENT_NOT_ERASED}`;
}

/**
 * A saved test case of the person (alias `t`): their number as the caller, or, for a known caller, a
 * greeting expectation that names them (`suggest` writes the greeting with the contact's name), or a
 * case name with their address or full name.
 */
const TEST_CASE_OF_SUBJECT = `((t.input->>'caller_number') = ANY(:phones::text[])
  OR ((t.input->>'caller_number') IS NOT NULL AND (t.expect->>'greeting_contains') ~* ANY(:greetings::text[]))
  OR t.name ILIKE ANY(:texts::text[]))`;

/** A case left with nothing to expect, or named after the person, goes; the others lose number and greeting. */
const TEST_CASE_DELETED = `(t.name ILIKE ANY(:texts::text[]) OR (t.expect - 'greeting_contains') = '{}'::jsonb)`;

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
    const contains = (text: string) => `%${literalLike(text)}%`;
    const fullNames = [...new Set(rows.flatMap(fullNamesOf))];
    return {
      organizationId,
      agentIds: agents.map((a) => a.id),
      contacts: rows,
      phoneForms: [...new Set([...phones].flatMap(phoneVariants))],
      emails: [...emails],
      fullNames,
      textPatterns: [...emails, ...fullNames].map(contains),
      greetingPatterns: [...new Set([...fullNames, ...rows.flatMap(nameWordsOf)])].map(wholeWords),
    };
  }

  exportContacts(subject: Subject): Contact[] {
    return subject.contacts.map(toContact);
  }

  /** The person's calls with every field, oldest first, in batches of at most `maxBytes` of text. */
  async *exportCalls(subject: Subject, maxBytes: number): AsyncGenerator<Call[]> {
    if (!findsCalls(subject)) return;
    for await (const rows of callsInBatches(statementsOn(this.db), () => this.callsOf(subject, 'c'), 'asc', maxBytes))
      yield rows.map(toCall);
  }

  /** The person's numbers on the do-not-call list. */
  async exportDoNotCall(subject: Subject) {
    const rows: DoNotCallRow[] = await this.numbersOf(subject, 'do_not_call')
      .select('phone_number', 'reason', 'source', 'created_at')
      .orderBy([{ column: 'created_at' }, { column: 'phone_number' }]);
    return rows.map(toDoNotCall);
  }

  /** The consent records of outbound calls to the person's numbers, oldest first. */
  async exportConsents(subject: Subject) {
    const rows: ConsentRow[] = await this.numbersOf(subject, 'outbound_consents')
      .select(CONSENT_COLUMNS)
      .orderBy([{ column: 'created_at' }, { column: 'id' }]);
    return rows.map(toConsentRecord);
  }

  /** What an erasure keeps of the person's numbers: do-not-call entries and consent records. */
  async countKept(subject: Subject): Promise<KeptCounts> {
    const count = async (table: string) =>
      Number((await this.numbersOf(subject, table).count({ n: '*' }).first())?.n ?? 0);
    const [doNotCall, consents] = await Promise.all([count('do_not_call'), count('outbound_consents')]);
    return { do_not_call: doNotCall, outbound_consent: consents };
  }

  async countCalls(subject: Subject): Promise<number> {
    if (!findsCalls(subject)) return 0;
    const row = await this.callsOf(subject, 'c').count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  async countWebhookBodies(subject: Subject): Promise<number> {
    if (!findsText(subject)) return 0;
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
    if (!findsCalls(subject)) return 0;
    const { rowCount } = await this.db.raw(
      `WITH batch AS (
         SELECT id, created_at FROM calls c
          -- CALL_OF_SUBJECT again: a row erased by a concurrent erasure no longer matches once locked
          WHERE c.id IN (${callIdsOf(subject)}) AND ${CALL_OF_SUBJECT}
          LIMIT :limit FOR UPDATE
       )
       -- created_at too: each row is found in its own month, not by a scan of every partition
       UPDATE calls c SET ${ERASED_CALL_FIELDS} FROM batch WHERE c.id = batch.id AND c.created_at = batch.created_at`,
      { ...matchParams(subject), limit, now },
    );
    return rowCount ?? 0;
  }

  /** Empties the personal fields of up to `limit` stored call.completed bodies of the person. */
  async redactWebhookBodyBatch(subject: Subject, limit: number): Promise<number> {
    if (!findsText(subject)) return 0;
    const { rowCount } = await this.db.raw(
      `WITH batch AS (
         SELECT id, created_at FROM events e
          WHERE e.organization_id = :org AND e.type = 'call.completed' AND ${eventIdsOf(subject)}
          LIMIT :limit FOR UPDATE
       )
       UPDATE events e SET payload = jsonb_set(e.payload, '{call}', (e.payload->'call') || :erased::jsonb
              -- the outcomes as on the call: enum and boolean ones stay
              || jsonb_build_object('extracted_data', ${ALLOWED_OUTCOMES(
                "e.payload->'call'->'extracted_data'",
                "(e.payload->'call'->>'agent_id')::uuid",
              )}))
         FROM batch WHERE e.id = batch.id AND e.created_at = batch.created_at`,
      { ...matchParams(subject), limit, erased: ERASED_EVENT_CALL },
    );
    return rowCount ?? 0;
  }

  /**
   * Strips up to `limit` of the person's saved test cases of their number and greeting expectation
   * (TEST_CASE_OF_SUBJECT); deletes those left with no expectation or named after the person.
   */
  async eraseTestCaseBatch(subject: Subject, now: Date, limit: number): Promise<number> {
    if (!findsText(subject)) return 0;
    const { rows } = await this.db.raw(
      `WITH batch AS (
         SELECT id FROM agent_test_cases t WHERE organization_id = :org AND ${TEST_CASE_OF_SUBJECT}
          LIMIT :limit FOR UPDATE
       ), gone AS (
         DELETE FROM agent_test_cases t USING batch WHERE t.id = batch.id AND ${TEST_CASE_DELETED} RETURNING t.id
       ), stripped AS (
         UPDATE agent_test_cases t SET input = t.input - 'caller_number', expect = t.expect - 'greeting_contains',
                updated_at = :now
           FROM batch WHERE t.id = batch.id AND NOT ${TEST_CASE_DELETED} RETURNING t.id
       )
       SELECT (SELECT count(*) FROM gone) + (SELECT count(*) FROM stripped) AS n`,
      { ...matchParams(subject), limit, now },
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Deletes outbound call jobs to the person (to one of their numbers, or for one of their contacts)
   * with their attempts: a scheduled one is never dialled then. The do-not-call entry and the consent
   * records stay (countKept).
   */
  async eraseOutboundBatch(subject: Subject, limit: number): Promise<number> {
    const { rows } = await this.db.raw(
      `WITH batch AS (
         SELECT id FROM outbound_jobs WHERE ${OUTBOUND_OF_SUBJECT} LIMIT :limit FOR UPDATE
       ), gone AS (
         DELETE FROM outbound_jobs j USING batch WHERE j.id = batch.id RETURNING j.id
       )
       SELECT count(*) AS n FROM gone`,
      { ...outboundParams(subject), limit },
    );
    return Number(rows[0]?.n ?? 0);
  }

  async countOutboundCalls(subject: Subject): Promise<number> {
    const { rows } = await this.db.raw(
      `SELECT count(*) AS n FROM outbound_jobs WHERE ${OUTBOUND_OF_SUBJECT}`,
      outboundParams(subject),
    );
    return Number(rows[0]?.n ?? 0);
  }

  async countTestCases(subject: Subject): Promise<number> {
    if (!findsText(subject)) return 0;
    const { rows } = await this.db.raw(
      `SELECT count(*) AS n FROM agent_test_cases t WHERE organization_id = :org AND ${TEST_CASE_OF_SUBJECT}`,
      matchParams(subject),
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Knowledge-base documents of the organization (its own and its agents') whose title, text or
   * chunks mention one of the person's numbers, addresses or full names; oldest first, at most
   * KB_REVIEW_LIMIT. Read only: a document is the organization's content, a person decides.
   */
  async kbDocumentsToReview(subject: Subject): Promise<KbDocumentToReview[]> {
    const patterns = [...subject.textPatterns, ...subject.phoneForms.map((p) => `%${literalLike(p)}%`)];
    if (patterns.length === 0) return [];
    const { rows } = await this.db.raw(
      `SELECT d.id, d.agent_id, d.title FROM kb_documents d
        WHERE d.organization_id = :org
          AND (d.title ILIKE ANY(:patterns::text[]) OR d.content ILIKE ANY(:patterns::text[])
               OR EXISTS (SELECT 1 FROM kb_chunks k WHERE k.document_id = d.id AND k.organization_id = :org
                           AND k.content ILIKE ANY(:patterns::text[])))
        ORDER BY d.created_at, d.id LIMIT :limit`,
      { org: subject.organizationId, patterns, limit: KB_REVIEW_LIMIT },
    );
    return rows as KbDocumentToReview[];
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

  private callsOf(subject: Subject, alias: 'c'): Knex.QueryBuilder {
    return this.db(`calls as ${alias}`)
      .where(`${alias}.organization_id`, subject.organizationId)
      .whereIn(`${alias}.agent_id`, subject.agentIds)
      .whereRaw(`${alias}.id IN (${callIdsOf(subject)}) AND ${CALL_OF_SUBJECT}`, matchParams(subject));
  }

  /** Rows of `table` (organization_id, phone_number) with one of the person's numbers (knex: none for no number). */
  private numbersOf(subject: Subject, table: string): Knex.QueryBuilder {
    return this.db(table)
      .where({ organization_id: subject.organizationId })
      .whereIn('phone_number', subject.phoneForms);
  }

  private eventsOf(subject: Subject): Knex.QueryBuilder {
    return this.db('events as e')
      .where({ 'e.organization_id': subject.organizationId, 'e.type': 'call.completed' })
      .whereRaw(eventIdsOf(subject), matchParams(subject));
  }

  /**
   * Stored answers of the organization's requests (or, for callers that reach several organizations,
   * of its members' credentials) whose body names one of the person's numbers (as a JSON string),
   * addresses, full names or contact ids.
   */
  private idempotencyOf(subject: Subject): Knex.QueryBuilder | undefined {
    const exact = [
      ...subject.phoneForms.map((p) => `%"${literalLike(p)}"%`),
      ...subject.contacts.map((c) => `%${c.id}%`),
    ];
    const caseless = [
      ...subject.emails.map((e) => `%"${literalLike(e)}"%`),
      ...subject.fullNames.map((n) => `%${literalLike(n)}%`),
    ];
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

/** A PostgreSQL regular expression matching `text` as whole words (`Li` not inside `Lisa`). */
function wholeWords(text: string): string {
  return `\\m${text.replace(/[.^$*+?()[\]{}|\\-]/g, (c) => `\\${c}`)}\\M`;
}

/** Something to look for: a number, an address or a full name. */
function findsText(subject: Subject): boolean {
  return subject.phoneForms.length > 0 || subject.textPatterns.length > 0;
}

function findsCalls(subject: Subject): boolean {
  return subject.agentIds.length > 0 && findsText(subject);
}

/** The named parameters of the *_OF_SUBJECT conditions. */
/** The outbound call jobs of an organization to the person: by number, or by one of their contacts. */
const OUTBOUND_OF_SUBJECT = `organization_id = :org AND (to_number = ANY(:phones::text[]) OR contact_id = ANY(:contacts::uuid[]))`;

function outboundParams(subject: Subject) {
  return { org: subject.organizationId, phones: subject.phoneForms, contacts: subject.contacts.map((c) => c.id) };
}

function matchParams(subject: Subject) {
  return {
    org: subject.organizationId,
    agents: subject.agentIds,
    phones: subject.phoneForms,
    texts: subject.textPatterns,
    greetings: subject.greetingPatterns,
    ...Object.fromEntries(subject.textPatterns.map((pattern, i) => [`text${i}`, pattern])),
  };
}
