import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { ConflictError } from '../../errors/index.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import { parseBody } from '../../api/validate.js';
import type { AgentAccess } from '../agents/agent-access.js';
import { currentForWrite } from '../agents/agent-items.js';
import { E164 } from '../agents/agent-input.schemas.js';
import { callerDisclosure } from '../agents/caller-disclosure.js';
import type { AgentService } from '../agents/agent.service.js';
import type { Schedule } from '../agents/schedule.js';
import { callerNumbersOf, greetingWithheld, momentsOf, type CallSimulator, type RunResult } from './call-simulator.js';
import {
  MAX_TEST_CASES,
  RunTestCasesRequestSchema,
  TestCaseInputSchema,
  type Simulation,
  type TestCaseExpect,
  type TestCaseInput,
} from './simulation.schemas.js';
import { transferEmployeeOf } from './simulation-rules.js';
import type { SimulationRepository, TestCaseRow } from './simulation.repository.js';
import { parseChoiceBody, type SimulationService } from './simulation.service.js';
import { suggestedMoments, type MomentKind } from './suggestions.js';
import { pick } from '../../db/pick.js';

function toTestCase(row: TestCaseRow) {
  return {
    ...pick(row, ['id', 'agent_id', 'name', 'input', 'expect']),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * What a suggestion pins: routing always; the greeting for a known caller (unless it was chosen with
 * something the requester may not read); the transfer at night.
 */
function expectationOf(simulation: Simulation, kind: MomentKind | 'contact', showsGreeting: boolean): TestCaseExpect {
  const expect: TestCaseExpect = {
    accepting_calls: simulation.accepting_calls,
    reason: simulation.reason,
    answered_by_agent_id: simulation.answered_by.agent_id,
  };
  // A prefix is contained in the text; 200 characters say enough and stay within the field's limit.
  if (kind === 'contact' && showsGreeting && simulation.greeting.text.trim() !== '')
    expect.greeting_contains = [...simulation.greeting.text].slice(0, 200).join('').trim();
  if (kind === 'night' && transferEmployeeOf(simulation) !== null)
    expect.transfer_employee_id = transferEmployeeOf(simulation);
  return expect;
}

/** Saved test cases of an agent: list, create (at most 200), delete, run, and a suggested starting set. */
export class TestCaseService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly repository: SimulationRepository,
    private readonly access: AgentAccess,
    private readonly agents: AgentService,
    private readonly simulations: SimulationService,
    private readonly simulator: CallSimulator,
    private readonly clock: Clock,
  ) {}

  async list(auth: AuthContext, agentId: string) {
    const agent = await this.access.resolve(auth, agentId, 'agents:read');
    return { data: (await this.repository.listCases(agent.id)).map(toTestCase) };
  }

  /** 409 when the agent already has 200; concurrent creates wait for each other (an advisory lock). */
  async create(auth: AuthContext, agentId: string, body: unknown) {
    const agent = await this.access.resolve(auth, agentId, 'agents:write');
    const input = parseBody(TestCaseInputSchema, body);
    const row = await this.audited.transaction(async (trx) => {
      const repository = this.repository.with(trx);
      await repository.lockCases(agent.id);
      if ((await repository.countCases(agent.id)) >= MAX_TEST_CASES)
        throw new ConflictError(`An agent has at most ${MAX_TEST_CASES} test cases; delete one first`);
      return repository.insertCase(agent, input, this.clock.now());
    });
    return toTestCase(row);
  }

  /** `If-Match` takes the case's ETag (its create answer's, or the tag of the case as the list shows it). */
  async delete(auth: AuthContext, agentId: string, caseId: string, conditions: WriteConditions): Promise<void> {
    const agent = await this.access.resolve(auth, agentId, 'agents:write');
    await this.audited.transaction(async (trx) => {
      const repository = this.repository.with(trx);
      const locked = await repository.findCaseForUpdate(agent.id, caseId);
      await currentForWrite(trx, agent, conditions, 'Test case', locked, toTestCase);
      await repository.deleteCase(agent.id, caseId);
    });
  }

  /** Every saved case against the stored configuration, a stored version, or unsaved changes (agents:read). */
  async run(auth: AuthContext, agentId: string, body: unknown): Promise<RunResult> {
    const agent = await this.access.resolve(auth, agentId, 'agents:read');
    const { input, changes } = await parseChoiceBody(RunTestCasesRequestSchema, body, (c) =>
      this.agents.validatePatch(auth, agent, c),
    );
    const cases = await this.repository.listCases(agent.id);
    const { simulated, surroundings } = await this.simulations.configuration(
      agent,
      { version: input.version, changes },
      callerNumbersOf(momentsOf(cases)),
    );
    return this.simulator.run(simulated, surroundings, cases, callerDisclosure(auth, agent.organization_id));
  }

  /**
   * Bodies for the create route that pin today's behaviour at the moments that matter (not
   * stored). The known caller's case needs contacts:read, since it shows the contact's number; its
   * greeting is pinned only when it does not show a count of calls the requester may not read.
   */
  async suggest(auth: AuthContext, agentId: string): Promise<{ data: TestCaseInput[] }> {
    const agent = await this.access.resolve(auth, agentId, 'agents:read');
    const moments: { name: string; at: string; kind: MomentKind | 'contact'; callerNumber: string | null }[] =
      suggestedMoments(
        { schedule: (agent.schedule as Schedule | null) ?? null, bundesland: agent.bundesland },
        this.clock.now(),
      ).map((m) => ({ ...m, callerNumber: null }));
    const may = callerDisclosure(auth, agent.organization_id);
    const contact = may.contact ? await this.repository.knownContact(agent) : undefined;
    const opening = moments.find((m) => m.kind === 'weekday_open');
    // A number written around the API (not E.164) would not pass the create route: no case then.
    if (contact && opening && E164.test(contact.phone))
      moments.push({ ...opening, name: 'Bekannter Anrufer', kind: 'contact', callerNumber: contact.phone });
    const asked = moments.map((m) => ({ at: new Date(m.at), callerNumber: m.callerNumber }));
    const { simulated, surroundings } = await this.simulations.configuration(agent, {}, callerNumbersOf(asked));
    const simulations = await this.simulator.simulate(simulated, surroundings, asked);
    return {
      data: moments.map((m, i) => ({
        name: [...m.name].slice(0, 200).join('').trim(),
        input: m.callerNumber ? { at: m.at, caller_number: m.callerNumber } : { at: m.at },
        expect: expectationOf(simulations[i]!, m.kind, !greetingWithheld(surroundings, m.callerNumber, may)),
      })),
    };
  }
}
