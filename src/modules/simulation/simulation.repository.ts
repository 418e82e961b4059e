import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { preparedSql, runPrepared } from '../../db/prepared.js';
import { AgentReads, type AgentRow } from '../agents/agent-reads.js';
import type { CallTool, TransferEmployee, TransferSlot } from '../agents/call-decision.js';
import type { CallerContact } from '../agents/greeting-contact.repository.js';
import type { TestCaseExpect } from './simulation.schemas.js';

/** A contact as greetings read it, with the numbers it is found by. */
export type NumberedContact = CallerContact & {
  phone_number: string | null;
  mobile_number: string | null;
  landline_number: string | null;
};

/** What a call can reach besides the agent (backup, employees, forwarding slots, tools), and the callers' contacts. */
export type CallSurroundings = {
  backup: { id: string; is_active: boolean } | null;
  employees: TransferEmployee[];
  slots: TransferSlot[];
  tools: CallTool[];
  /** The agent's contacts with one of the asked numbers, most recently updated first (as greetings pick them). */
  contacts: NumberedContact[];
};

export type TestCaseRow = {
  id: string;
  organization_id: string;
  agent_id: string;
  name: string;
  input: { at: string; caller_number?: string };
  expect: TestCaseExpect;
  created_at: Date;
  updated_at: Date;
};

/**
 * The columns of what a call can reach besides the callers (`backup`, `employees`, `slots`, `tools`),
 * bound by `:agent`, `:organization` and `:backup`: the routing answer keeps them per agent.
 */
export const CONFIGURATION_COLUMNS = `
     (SELECT json_build_object('id', b.id, 'is_active', b.is_active) FROM agents b
       WHERE b.id = :backup::uuid AND b.organization_id = :organization) AS backup,
     (SELECT coalesce(json_agg(json_build_object('id', e.id, 'name', e.name, 'phone_number', e.phone_number,
               'status', e.status, 'active', e.active) ORDER BY e.name, e.id), '[]'::json)
        FROM employees e WHERE e.agent_id = :agent) AS employees,
     (SELECT coalesce(json_agg(json_build_object('slotnummer', s.slotnummer, 'prioritaet_1', s.prioritaet_1,
               'prioritaet_2', s.prioritaet_2, 'prioritaet_3', s.prioritaet_3) ORDER BY s.slotnummer, s.id), '[]'::json)
        FROM forwarding_slots s WHERE s.agent_id = :agent) AS slots,
     (SELECT coalesce(json_agg(json_build_object('name', t.name, 'tool_type', t.tool_type,
               'is_enabled', t.is_enabled, 'employee_id', t.employee_id) ORDER BY t.priority, t.name), '[]'::json)
        FROM tools t WHERE t.agent_id = :agent) AS tools`;

/** A contact as greetings read it, with its numbers, as JSON (`c`: a row of contacts). */
export const NUMBERED_CONTACT_JSON = `json_build_object('id', c.id, 'first_name', c.first_name,
               'last_name', c.last_name, 'salutation', c.salutation, 'tags', c.tags, 'phone_number', c.phone_number,
               'mobile_number', c.mobile_number, 'landline_number', c.landline_number)`;

/**
 * The columns of the surroundings (CONFIGURATION_COLUMNS and `contacts`), bound by `:agent`,
 * `:organization`, `:backup` and `:phones`: the reads of a simulation in one round trip.
 */
export const SURROUNDINGS_COLUMNS = `${CONFIGURATION_COLUMNS},
     (SELECT coalesce(json_agg(${NUMBERED_CONTACT_JSON} ORDER BY c.updated_at DESC, c.id), '[]'::json)
        FROM contacts c WHERE c.agent_id = :agent AND c.organization_id = :organization
         AND (c.phone_number = ANY(:phones::text[]) OR c.mobile_number = ANY(:phones::text[])
              OR c.landline_number = ANY(:phones::text[]))) AS contacts`;

/** One round trip, parsed and planned once per connection: the hot path of every simulation. */
const SURROUNDINGS_SQL = preparedSql('call_surroundings', `SELECT ${SURROUNDINGS_COLUMNS}`);

/** The bindings of SURROUNDINGS_COLUMNS. */
export function surroundingsBindings(
  agent: { id: string; organization_id: string },
  backupId: string | null,
  phones: readonly string[],
): Record<string, unknown> {
  return { agent: agent.id, organization: agent.organization_id, backup: backupId, phones: [...phones] };
}

const CASE_COLUMNS = ['id', 'organization_id', 'agent_id', 'name', 'input', 'expect', 'created_at', 'updated_at'];

/**
 * Reads for the call simulation (the employees, slots and tools resources own their tables) and the
 * test cases. The surroundings come in one round trip: a simulation stays one query away.
 */
export class SimulationRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  with(trx: Knex.Transaction): SimulationRepository {
    return new SimulationRepository(trx);
  }

  /** Backup (when `backupId`), employees, slots in slot order, tools as the tools list orders them, contacts of `phones`. */
  async surroundings(
    agent: { id: string; organization_id: string },
    backupId: string | null,
    phones: readonly string[],
  ): Promise<CallSurroundings> {
    const { rows } = await runPrepared(this.db, SURROUNDINGS_SQL, surroundingsBindings(agent, backupId, phones));
    return rows[0] as CallSurroundings;
  }

  /**
   * The agent as this transaction sees it (after a write), with whether any test case exists and
   * the agents of its organization that name it as their backup and require passing test cases.
   */
  async agentWithCases(agent: {
    id: string;
    organization_id: string;
  }): Promise<{ row: AgentRow; has_cases: boolean; guarded_referrers: string[] } | undefined> {
    const { rows } = await this.db.raw(
      `SELECT ${AgentReads.sql('o.id')} AS row,
              EXISTS (SELECT 1 FROM agent_test_cases c WHERE c.agent_id = o.id) AS has_cases,
              ARRAY(SELECT r.id::text FROM agents r
                     WHERE r.backup_agent_id = o.id AND r.organization_id = o.organization_id
                       AND r.require_passing_test_cases ORDER BY r.id) AS guarded_referrers
         FROM agents o WHERE o.id = ? AND o.organization_id = ?`,
      [agent.id, agent.organization_id],
    );
    const found = rows[0] as
      { row: Record<string, unknown>; has_cases: boolean; guarded_referrers: string[] } | undefined;
    return found
      ? { row: AgentReads.fromJson(found.row), has_cases: found.has_cases, guarded_referrers: found.guarded_referrers }
      : undefined;
  }

  async listCases(agentId: string): Promise<TestCaseRow[]> {
    return this.db('agent_test_cases').where({ agent_id: agentId }).orderBy('seq').select(CASE_COLUMNS);
  }

  /** Inside a transaction: the agent's test-case writes run one after the other until commit. */
  async lockCases(agentId: string): Promise<void> {
    await this.db.raw(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, [`agent_test_cases:${agentId}`]);
  }

  async countCases(agentId: string): Promise<number> {
    const row = await this.db('agent_test_cases').where({ agent_id: agentId }).count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  async insertCase(
    agent: { id: string; organization_id: string },
    fields: Pick<TestCaseRow, 'name' | 'input' | 'expect'>,
    at: Date,
  ): Promise<TestCaseRow> {
    const [row] = await this.db('agent_test_cases')
      .insert({
        organization_id: agent.organization_id,
        agent_id: agent.id,
        name: fields.name,
        input: JSON.stringify(fields.input),
        expect: JSON.stringify(fields.expect),
        created_at: at,
        updated_at: at,
      })
      .returning(CASE_COLUMNS);
    return row;
  }

  /** Inside a transaction: the case locked for a write (undefined: no such case of this agent). */
  async findCaseForUpdate(agentId: string, id: string): Promise<TestCaseRow | undefined> {
    return this.db('agent_test_cases').where({ agent_id: agentId, id }).forUpdate().first(CASE_COLUMNS);
  }

  async deleteCase(agentId: string, id: string): Promise<boolean> {
    return (await this.db('agent_test_cases').where({ agent_id: agentId, id }).delete()) > 0;
  }

  /** The most recently updated contact of the agent that has a number, and that number. */
  async knownContact(agent: {
    id: string;
    organization_id: string;
  }): Promise<{ id: string; phone: string } | undefined> {
    return this.db('contacts')
      .where({ agent_id: agent.id, organization_id: agent.organization_id })
      .andWhere((q) => q.whereNotNull('phone_number').orWhereNotNull('mobile_number').orWhereNotNull('landline_number'))
      .orderBy([
        { column: 'updated_at', order: 'desc' },
        { column: 'id', order: 'asc' },
      ])
      .first('id', this.db.raw('coalesce(phone_number, mobile_number, landline_number) AS phone'));
  }
}
