import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import { AppError, NotFoundError, ValidationError, type ErrorDetail } from '../../errors/index.js';
import { zodIssuesToDetails } from '../../errors/zod.js';
import type { z } from '../../openapi/zod.js';
import { CONFIGURATION_AGENT_FIELDS, type ToolSnapshot } from '../agent-versions/agent-configuration.js';
import type { AgentVersionRepository } from '../agent-versions/agent-version.repository.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { AgentRow } from '../agents/agent.repository.js';
import { callerDisclosure } from '../agents/caller-disclosure.js';
import type { AgentService } from '../agents/agent.service.js';
import { callerNumbersOf, type CallSimulator, type SimulatedAgent, type Surroundings } from './call-simulator.js';
import { SimulateRequestSchema, type Simulation } from './simulation.schemas.js';

/** Which configuration to simulate: stored, a stored version, and unsaved PATCH changes on top. */
export type ConfigurationChoice = { changes?: Record<string, unknown>; version?: number };

/**
 * Parses a body, naming every problem at once; `changes` go through the agent PATCH rules (fields
 * `changes.<name>`) and come back as PATCH would write them.
 */
export async function parseChoiceBody<S extends z.ZodType>(
  schema: S,
  body: unknown,
  validateChanges: (changes: unknown) => Promise<Record<string, unknown>>,
): Promise<{ input: z.output<S>; changes: Record<string, unknown> | undefined }> {
  let valid: Record<string, unknown> | undefined;
  const raw = body ?? {};
  const result = schema.safeParse(raw);
  const details: ErrorDetail[] = result.success ? [] : zodIssuesToDetails(result.error.issues);
  const changes = typeof raw === 'object' ? (raw as Record<string, unknown>).changes : undefined;
  if (typeof changes === 'object' && changes !== null && !Array.isArray(changes)) {
    valid = await validateChanges(changes).catch((error: unknown) => {
      if (!(error instanceof AppError) || error.status !== 400) throw error;
      for (const d of error.details ?? []) details.push({ field: `changes.${d.field}`, message: d.message });
      return undefined;
    });
  }
  if (!result.success || details.length > 0) throw new ValidationError('Request body is invalid', details);
  return { input: result.data, changes: valid };
}

/** POST /v1/agents/{agentId}/simulate (agents:read): what happens to a call, without a call. */
export class SimulationService {
  constructor(
    private readonly access: AgentAccess,
    private readonly agents: AgentService,
    private readonly versions: AgentVersionRepository,
    private readonly simulator: CallSimulator,
    private readonly clock: Clock,
  ) {}

  async simulate(auth: AuthContext, agentId: string, body: unknown): Promise<Simulation> {
    const agent = await this.access.resolve(auth, agentId, 'agents:read');
    const { input, changes } = await parseChoiceBody(SimulateRequestSchema, body, (c) =>
      this.agents.validatePatch(auth, agent, c),
    );
    const moment = { at: input.at ? new Date(input.at) : this.clock.now(), callerNumber: input.caller_number ?? null };
    // What the caller may not read is not looked up: the greeting cannot show it either.
    const may = callerDisclosure(auth, agent.organization_id);
    const { simulated, surroundings } = await this.configuration(
      agent,
      { version: input.version, changes },
      may.contact ? callerNumbersOf([moment]) : [],
    );
    const [simulation] = await this.simulator.simulate(simulated, surroundings, [moment], may.callsToday);
    return simulation!;
  }

  /**
   * The configuration to simulate: the agent as stored, or version `n` (its agent fields and tools;
   * employees and slots are not versioned and stay current), with `changes` (validated by
   * parseChoiceBody) on top; and the contacts of `callerNumbers`.
   */
  async configuration(
    agent: Readonly<AgentRow>,
    choice: ConfigurationChoice,
    callerNumbers: readonly string[],
  ): Promise<{ simulated: SimulatedAgent; surroundings: Surroundings }> {
    let simulated: SimulatedAgent = { ...agent };
    let tools: ToolSnapshot[] | undefined;
    if (choice.version !== undefined) {
      const version = await this.versions.find(agent.id, agent.organization_id, choice.version);
      if (!version) throw new NotFoundError('Agent version');
      for (const name of CONFIGURATION_AGENT_FIELDS) {
        if (name in version.configuration) simulated[name] = version.configuration[name];
      }
      tools = version.configuration.tools ?? [];
    }
    if (choice.changes) simulated = { ...simulated, ...choice.changes };
    return { simulated, surroundings: await this.simulator.configuration(simulated, callerNumbers, tools) };
  }
}
