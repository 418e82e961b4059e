import { assertPermission, type AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import { NotFoundError } from '../../errors/index.js';
import { parseBody } from '../../api/validate.js';
import { normalizeCallerNumber } from '../../phone/phone-number.js';
import { CONFIGURATION_AGENT_FIELDS, type ToolSnapshot } from '../agent-versions/agent-configuration.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { AgentRow } from '../agents/agent.repository.js';
import { surroundingsFrom, type CallSimulator, type SimulatedAgent } from '../simulation/call-simulator.js';
import type { Simulation } from '../simulation/simulation.schemas.js';
import type { RouteReads } from './route-reads.js';
import type { AgentContact, VersionRef } from './route.repository.js';
import { RouteRequestSchema, type RouteAnswer, type RunConfiguration } from './route.schemas.js';

/** The experiment variant a routed call runs, when the dialled agent has a running experiment. */
export type VariantChoice = { experiment_id: string; name: string; variant: string; version_id: string | null };

export type RoutedCall = { callId: string; callerNumber: string | null; at: Date };

/** Picks (and remembers, by call_id) the variant of a routed call; the experiments module provides it. */
export interface VariantAssigner {
  assign(agent: { id: string; organization_id: string }, call: RoutedCall): Promise<VariantChoice | null>;
}

/** A routed call as each configuration's run reads it: the caller's contacts with the agents read up front. */
type RoutedCallReads = {
  callerNumber: string | null;
  at: Date;
  contacts: readonly AgentContact[];
  /** The agents whose contacts `contacts` holds. */
  answerers: readonly string[];
};

const NO_CONTACTS: readonly AgentContact[] = Object.freeze([]);

export const NO_EXPERIMENTS: VariantAssigner = { assign: () => Promise.resolve(null) };

/** The written forms a trunk may send for the dialled number; E.164 when it is a valid one. */
function calledNumberOf(written: string): string {
  return normalizeCallerNumber(written) ?? written.replace(/[\s\-./()]/g, '');
}

/**
 * calledNumberOf, remembered: the dialled numbers are the service's own, a few, each dialled again
 * and again, and validating one against the numbering plan (libphonenumber-js) is the dearest step
 * of a cached route answer after the socket writes. Bounded: emptied when full.
 */
const calledNumbers = new Map<string, string>();
const CALLED_NUMBERS_MAX = 10_000;

function rememberedCalledNumber(written: string): string {
  let number = calledNumbers.get(written);
  if (number === undefined) {
    number = calledNumberOf(written);
    if (calledNumbers.size >= CALLED_NUMBERS_MAX) calledNumbers.clear();
    calledNumbers.set(written, number);
  }
  return number;
}

/**
 * POST /v1/runtime/route (runtime:route): everything a voice runtime needs for one incoming call in
 * one answer. The decision is the one call decision (agents/call-decision.ts, through the call
 * simulator, as /status and /simulate take it); the configuration is the answering agent's (the
 * experiment variant's version for the dialled agent).
 */
export class RouteService {
  constructor(
    private readonly reads: RouteReads,
    private readonly access: AgentAccess,
    private readonly simulator: CallSimulator,
    private readonly clock: Clock,
    private readonly variants: VariantAssigner = NO_EXPERIMENTS,
  ) {}

  async route(auth: AuthContext, body: unknown): Promise<RouteAnswer> {
    assertPermission(auth, 'runtime:route');
    const input = parseBody(RouteRequestSchema, body);
    const number = await this.reads.number(rememberedCalledNumber(input.called_number));
    // A number of an organization out of reach is as unknown as one nobody registered.
    if (!number || !auth.organizations.has(number.organization_id)) throw new NotFoundError('Phone number');
    const agent = await this.access.resolve(auth, number.agent_id, 'runtime:route');
    const at = input.at ? new Date(input.at) : this.clock.now();
    const callerNumber = input.caller_number ? normalizeCallerNumber(input.caller_number) : null;
    // Who may answer: the agent or its backup. Their kept configurations cost no statement; the
    // caller's contacts with both are one. The number's row says whether an experiment runs, so a
    // call without one spends no statement on it.
    const answerers = agent.backup_agent_id ? [agent.id, agent.backup_agent_id] : [agent.id];
    const [choice, contacts] = await Promise.all([
      number.experiment_running ? this.variants.assign(agent, { callId: input.call_id, callerNumber, at }) : null,
      callerNumber ? this.reads.contacts(agent.organization_id, answerers, callerNumber) : NO_CONTACTS,
    ]);
    const call = { callerNumber, at, contacts, answerers };
    const dialled = await this.run(agent, choice?.version_id ?? null, call);
    const decision = dialled.simulation;
    const answeredBy = decision.answered_by.agent_id;
    let answering: { simulation: Simulation; configuration: RunConfiguration } | null = null;
    if (answeredBy === agent.id) answering = dialled;
    else if (answeredBy !== null)
      answering = await this.run(await this.access.resolve(auth, answeredBy, 'runtime:route'), null, call);
    return {
      call_id: input.call_id,
      called_number: number.number,
      caller_number: callerNumber,
      at: at.toISOString(),
      phone_number: { id: number.id, number: number.number, label: number.label, provider: number.provider },
      agent_id: agent.id,
      answered_by_agent_id: answeredBy,
      via: decision.answered_by.via,
      reason: decision.reason,
      accepting_calls: decision.accepting_calls,
      forwarding_target: answering?.simulation.transfer_targets.find((t) => t.available) ?? null,
      decision,
      configuration: answering?.configuration ?? null,
      experiment: choice ? { id: choice.experiment_id, name: choice.name, variant: choice.variant } : null,
    };
  }

  /**
   * The decision of one agent's configuration (current, or stored version `versionId`) for this
   * call, and the configuration it runs.
   */
  private async run(
    agent: Readonly<AgentRow>,
    versionId: string | null,
    call: RoutedCallReads,
  ): Promise<{ simulation: Simulation; configuration: RunConfiguration }> {
    const { callerNumber, at } = call;
    const callers = callerNumber ? [callerNumber] : [];
    const simulated: SimulatedAgent = { ...agent };
    let tools: readonly ToolSnapshot[];
    let version: VersionRef | null;
    let workflow: unknown;
    let surroundings;
    const stored = versionId ? await this.reads.version(agent.id, versionId) : undefined;
    if (stored) {
      for (const name of CONFIGURATION_AGENT_FIELDS)
        if (name in stored.configuration) simulated[name] = stored.configuration[name];
      tools = stored.configuration.tools ?? [];
      workflow = stored.configuration.workflow ?? null;
      version = { id: stored.id, version: stored.version };
      surroundings = await this.simulator.configuration(simulated, callers, tools);
    } else {
      const [current, contacts] = await Promise.all([this.reads.configuration(agent), this.contactsOf(agent, call)]);
      ({ tools, latest: version } = current);
      workflow = agent.workflow ?? null;
      surroundings = surroundingsFrom(simulated, { ...current.surroundings, contacts }, callers);
    }
    const [simulation] = await this.simulator.simulate(simulated, surroundings, [{ at, callerNumber }]);
    const fields: Record<string, unknown> = {};
    for (const name of CONFIGURATION_AGENT_FIELDS) fields[name] = simulated[name] ?? null;
    return {
      simulation: simulation!,
      configuration: {
        agent_id: agent.id,
        version_id: version?.id ?? null,
        version: version?.version ?? null,
        agent: fields,
        workflow,
        tools: tools as ToolSnapshot[],
        greeting: simulation!.greeting.text,
        greeting_variant_index: simulation!.greeting.variant_index,
      },
    };
  }

  /** The caller's contacts with `agent`: from those read up front, else (a stored version's other backup) read now. */
  private async contactsOf(agent: Readonly<AgentRow>, call: RoutedCallReads): Promise<AgentContact[]> {
    if (call.callerNumber === null) return [];
    const contacts = call.answerers.includes(agent.id)
      ? call.contacts
      : await this.reads.contacts(agent.organization_id, [agent.id], call.callerNumber);
    return contacts.filter((c) => c.agent_id === agent.id);
  }
}
