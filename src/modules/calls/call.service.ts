import type { Knex } from 'knex';
import { E164_PATTERN } from '../../phone/phone-number.js';
import type { AgentRef, AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import type { ReadRouting } from '../../db/replicas.js';
import { NotFoundError, ValidationError } from '../../errors/index.js';
import type { EventRecorder, NewEvent } from '../../events/event-recorder.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import { rejectCursorWithPage, type CursorPage } from '../../api/pagination.js';
import { parseBody } from '../../api/validate.js';
import { noteAuditResource } from '../../audit/request-context.js';
import { assertWritePreconditions } from '../../api/write-preconditions.js';
import { requiresIfMatch } from '../organizations/organization.repository.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { AgentRow } from '../agents/agent.repository.js';
import {
  isCallKeyConflict,
  toCall,
  toEventCall,
  type Call,
  type CallListItem,
  type CallRepository,
  type CallRow,
  type IntakeCall,
} from './call.repository.js';
import { redactPii, redactStringOutcomes } from '../../privacy/pii-redaction.js';
import type { z } from 'zod';
import { zodIssuesToDetails } from '../../errors/zod.js';
import { parseExtractedFilters, withoutExtractedKeys, type ExtractedFilter } from './extracted-filters.js';
import { checkExtractedData, type ExtractedData } from './extracted-data.js';
import { callerNumberOf, intakeOutcome, trashOnDone } from './call.rules.js';
import { IntakeCallSchema, ListCallsQuery, UpdateCallSchema, type IntakeCallInput } from './call.schemas.js';

/**
 * A calls query: the schema's parameters and the `extracted.<name>` filters (typed by the agent's
 * analysis_fields), every problem of both in one 400.
 */
export function parseCallsQuery<S extends z.ZodType<object>>(
  schema: S,
  agent: AgentRow,
  query: unknown,
): z.output<S> & { extracted: ExtractedFilter[] } {
  const result = schema.safeParse(withoutExtractedKeys(query));
  const extracted = parseExtractedFilters(agent.analysis_fields ?? [], query);
  const details = [...(result.success ? [] : zodIssuesToDetails(result.error.issues)), ...extracted.details];
  if (details.length > 0 || !result.success) throw new ValidationError('Invalid query parameters', details);
  return { ...result.data, extracted: extracted.filters };
}

export type CallIntakeHooks = {
  optOut?: (trx: Knex.Transaction, organizationId: string, phoneNumber: string) => Promise<void>;
};

/** Call records: read (calls:read), reported by the telephony layer and edited (calls:write). */
export class CallService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly calls: CallRepository,
    private readonly events: EventRecorder,
    private readonly access: AgentAccess,
    private readonly clock: Clock,
    /** Outbound calling's hooks: `optOut` lists a caller's number in the do-not-call list, in the intake's transaction. */
    private readonly outbound: CallIntakeHooks = {},
    /** Lists and search read from a healthy replica when there is one (src/db/replicas.ts). */
    private readonly reads?: ReadRouting,
  ) {}

  /** A page by number (`page`) or after a keyset position (`cursor`); never both. */
  async list(auth: AuthContext, agentId: string, query: unknown): Promise<CursorPage<CallListItem>> {
    const agent = await this.access.resolve(auth, agentId, 'calls:read');
    rejectCursorWithPage(query);
    const { page, limit, cursor, ...filters } = parseCallsQuery(ListCallsQuery, agent, query);
    const paging = cursor === undefined ? { page, limit } : { cursor, limit };
    if (!this.reads?.configured) return this.calls.list(agent, filters, paging);
    return this.reads.read(auth, (db) => this.calls.with(db).list(agent, filters, paging));
  }

  async get(auth: AuthContext, agentId: string, callId: string): Promise<Call> {
    const agent = await this.access.resolve(auth, agentId, 'calls:read');
    const call = await this.calls.find(agent, callId);
    if (!call) throw new NotFoundError('Call');
    return toCall(call);
  }

  /**
   * Intake of a finished call. Idempotent on `call_id`: a repeat returns the stored call
   * (`created: false`) and records nothing. A new call records `call.completed` with it, for the
   * webhook worker. Per new call: one read (the organization's setting with the call's experiment
   * variant), then one statement of the insert (its triggers count it), the event, its dispatch
   * job and the audit row, without a transaction; an opt-out is listed in a transaction with them
   * (docs/calls.md).
   */
  async intake(auth: AuthContext, agentId: string, body: unknown): Promise<{ created: boolean; call: Call }> {
    const agent = await this.access.resolve(auth, agentId, 'calls:write');
    const input = parseBody(IntakeCallSchema, body);
    const extracted = this.extracted(agent, input.extracted_data, this.clock.now().getUTCFullYear());
    // The audit row's organization, known here: its writer need not look the agent up again.
    noteAuditResource({ organizationId: agent.organization_id });
    try {
      const { call, trash, employeeName } = await this.intakeCall(agent, input, extracted);
      const insert = this.calls.insertStatement(call, trash);
      // The event carries the call as it is stored: every stored value is the one given here (the
      // payload is jsonb, so the key order of outcomes is the column's either way), but for the
      // experiment, which the statement finds (payloadSql), and deleted_at, which the event omits.
      const stored: CallRow = {
        ...call,
        id: insert.id,
        experiment_id: null,
        variant: null,
        deleted_at: null,
        is_purged: false,
        purged_at: null,
        employee_name: employeeName,
      };
      const event: NewEvent = {
        organization_id: agent.organization_id,
        agent_id: agent.id,
        type: 'call.completed',
        payload: { event: 'call.completed', call: toEventCall(stored) },
        payloadSql: this.calls.intakeEventPayload(call),
      };
      const optOut = this.outbound.optOut;
      const phoneNumber = call.phone_number;
      const [row] =
        input.opt_out && optOut && phoneNumber && E164_PATTERN.test(phoneNumber)
          ? // Before the insert: a repeat's insert fails and takes the opt-out back with it.
            await this.audited.transaction(
              async (trx) => {
                await optOut(trx, agent.organization_id, phoneNumber);
                return this.events.recordWith<CallRow>(trx, insert, event);
              },
              { auditFirst: true },
            )
          : await this.audited.statement((db, audit) => this.events.recordWith<CallRow>(db, insert, event, audit));
      row!.employee_name = employeeName;
      return { created: true, call: toCall(row!) };
    } catch (error) {
      if (!isCallKeyConflict(error)) throw error;
    }
    // A repeat: its insert failed and wrote nothing (the audit row is written after it, as for a
    // write without a transaction), and the call it repeats is committed.
    const stored = await this.calls.findByCallId(agent, input.call_id);
    if (!stored) throw new Error('call_id conflict without a stored call');
    return { created: false, call: toCall(stored) };
  }

  /** The new call, after the reads it depends on (400 for a foreign employee or outbound job). */
  private async intakeCall(
    agent: AgentRow,
    input: IntakeCallInput,
    extracted: ExtractedData,
  ): Promise<{ call: IntakeCall; trash: boolean; employeeName: string | null }> {
    const calls = this.calls;
    const employeeName = input.employee_id ? await this.requireEmployee(calls, agent, input.employee_id) : null;
    if (input.outbound_call_id && !(await calls.isOutboundJobOf(agent, input.outbound_call_id)))
      throw new ValidationError('Request body is invalid', [
        { field: 'outbound_call_id', message: 'No outbound call job of this agent has this id' },
      ]);
    const { call, trash } = this.newCall(agent, input);
    return { call: { ...call, extracted_data: extracted }, trash, employeeName };
  }

  /** done, note, employee_id, extracted_data (replaced whole). Marking a call done trashes it when the organization auto-deletes done calls. */
  /** `If-Match` is checked against the locked call, as its GET shows it. */
  async update(
    auth: AuthContext,
    agentId: string,
    callId: string,
    body: unknown,
    conditions: WriteConditions,
  ): Promise<Call> {
    const agent = await this.access.resolve(auth, agentId, 'calls:write');
    if (!(await this.calls.find(agent, callId))) throw new NotFoundError('Call');
    const { extracted_data: extractedInput, ...input } = parseBody(UpdateCallSchema, body);
    const year = this.clock.now().getUTCFullYear();
    const extracted = extractedInput === undefined ? undefined : this.extracted(agent, extractedInput, year);
    // A note written by staff is redacted as the agent's own texts are.
    if (typeof input.note === 'string') input.note = redactPii(input.note, agent.redact_pii ?? [], year);
    const row = await this.audited.transaction(async (trx) => {
      const calls = this.calls.with(trx);
      const current = await calls.lock(agent, callId);
      if (!current) throw new NotFoundError('Call');
      await assertWritePreconditions(trx, conditions, requiresIfMatch, {
        organizationId: agent.organization_id,
        current: toCall(current),
      });
      if (input.employee_id) await this.requireEmployee(calls, agent, input.employee_id);
      const changes: Partial<CallRow> = Object.fromEntries(
        Object.entries(input).filter(([, value]) => value !== undefined),
      );
      if (extracted !== undefined) changes.extracted_data = extracted;
      if (Object.keys(changes).length === 0) return current;
      const now = this.clock.now();
      const autoDelete = await calls.autoDeleteDoneCalls(agent.organization_id);
      if (trashOnDone(current.done, input.done, autoDelete) && current.deleted_at === null) changes.deleted_at = now;
      return calls.update(agent, callId, { ...changes, updated_at: now });
    });
    return toCall(row);
  }

  /**
   * The outcomes to store, checked against the agent's analysis_fields as they are now (400 naming
   * each problem), with the agent's redact_pii kinds replaced in the string-typed ones.
   */
  private extracted(agent: AgentRow, data: Record<string, unknown> | undefined, year: number): ExtractedData {
    const fields = agent.analysis_fields ?? [];
    const checked = checkExtractedData(fields, data);
    if (checked.details.length > 0) throw new ValidationError('Request body is invalid', checked.details);
    return redactStringOutcomes(fields, checked.data, agent.redact_pii ?? [], year);
  }

  /** 400 unless the employee belongs to this agent. */
  private async requireEmployee(calls: CallRepository, agent: AgentRef, employeeId: string): Promise<string> {
    const name = await calls.employeeName(agent, employeeId);
    if (name === undefined) {
      throw new ValidationError('Request body is invalid', [
        { field: 'employee_id', message: 'No employee of this agent has this id' },
      ]);
    }
    return name;
  }

  /**
   * The call as it will be stored, but for what its insert finds (IntakeCall), and whether it goes to
   * the trash if its organization auto-deletes done calls (the insert reads that setting).
   */
  private newCall(
    agent: AgentRow,
    input: IntakeCallInput,
  ): { call: Omit<IntakeCall, 'extracted_data'>; trash: boolean } {
    const now = this.clock.now();
    // Before anything is stored or sent: the stored call and the call.completed body are built from this.
    const kinds = agent.redact_pii ?? [];
    const redact = (text: string | null) => (text === null ? null : redactPii(text, kinds, now.getUTCFullYear()));
    const { done, trash } = intakeOutcome(input, {
      shortCallsAutoEdit: agent.short_calls_auto_edit === true,
      autoDeleteDoneCalls: true,
    });
    const call = {
      organization_id: agent.organization_id,
      agent_id: agent.id,
      call_id: input.call_id,
      customer_name: redact(input.customer_name ?? null),
      customer_request: redact(input.customer_request ?? null),
      phone_number: input.phone_number ? callerNumberOf(input.phone_number) : null,
      duration: input.duration,
      done,
      general_success: input.general_success ?? null,
      disconnection_reason: input.disconnection_reason ?? null,
      call_summary: redact(input.call_summary ?? null),
      transcript: input.transcript ? input.transcript.map((entry) => ({ ...entry, text: redact(entry.text)! })) : null,
      audio_file_url: input.audio_file_url ?? null,
      final_score: input.final_score ?? null,
      employee_id: input.employee_id ?? null,
      note: redact(input.note ?? null),
      direction: input.outbound_call_id ? ('outbound' as const) : ('inbound' as const),
      outbound_call_id: input.outbound_call_id ?? null,
      created_at: now,
      updated_at: now,
    };
    return { call, trash };
  }
}
