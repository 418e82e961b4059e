import { assertPermission, type AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import { NotFoundError } from '../../errors/index.js';
import { parseBody } from '../../api/validate.js';
import { normalizeCallerNumber } from '../../phone/phone-number.js';
import { CONFIGURATION_AGENT_FIELDS, type ToolSnapshot } from '../agent-versions/agent-configuration.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { AgentRow } from '../agents/agent.repository.js';
import {
  surroundingsFrom,
  type CallSimulator,
  type SimulatedAgent,
  type Surroundings,
} from '../simulation/call-simulator.js';
import type { Simulation } from '../simulation/simulation.schemas.js';
import type { CurrentConfiguration, RouteRepository, VersionRef } from './route.repository.js';
import { RouteRequestSchema, type RouteAnswer, type RunConfiguration } from './route.schemas.js';

/** The experiment variant a routed call runs, when the dialled agent has a running experiment. */
export type VariantChoice = { experiment_id: string; name: string; variant: string; version_id: string | null };

export type RoutedCall = { callId: string; callerNumber: string | null; at: Date };

/** An agent's current configuration as a routed call reads it, before the decision. */
type CurrentReads = { simulated: SimulatedAgent; current: CurrentConfiguration; surroundings: Surroundings };

/** Picks (and remembers, by call_id) the variant of a routed call; the experiments module provides it. */
export interface VariantAssigner {
  assign(agent: { id: string; organization_id: string }, call: RoutedCall): Promise<VariantChoice | null>;
}

export const NO_EXPERIMENTS: VariantAssigner = { assign: () => Promise.resolve(null) };

/** The written forms a trunk may send for the dialled number; E.164 when it is a valid one. */
function calledNumberOf(written: string): string {
  return normalizeCallerNumber(written) ?? written.replace(/[\s\-./()]/g, '');
}

/**
 * POST /v1/runtime/route (runtime:route): everything a voice runtime needs for one incoming call in
 * one answer. The decision is the one call decision (agents/call-decision.ts, through the call
 * simulator, as /status and /simulate take it); the configuration is the answering agent's (the
 * experiment variant's version for the dialled agent).
 */
export class RouteService {
  constructor(
    private readonly repository: RouteRepository,
    private readonly access: AgentAccess,
    private readonly simulator: CallSimulator,
    private readonly clock: Clock,
    private readonly variants: VariantAssigner = NO_EXPERIMENTS,
  ) {}

  async route(auth: AuthContext, body: unknown): Promise<RouteAnswer> {
    assertPermission(auth, 'runtime:route');
    const input = parseBody(RouteRequestSchema, body);
    const number = await this.repository.findNumber(calledNumberOf(input.called_number));
    // A number of an organization out of reach is as unknown as one nobody registered.
    if (!number || number.agent_id === null || !auth.organizations.has(number.organization_id))
      throw new NotFoundError('Phone number');
    const agent = await this.access.resolve(auth, number.agent_id, 'runtime:route');
    const at = input.at ? new Date(input.at) : this.clock.now();
    const callerNumber = input.caller_number ? normalizeCallerNumber(input.caller_number) : null;
    // The number's row says whether an experiment runs, so a call without one spends no statement on
    // it; with one, the variant and the current configuration's reads go out together.
    const [choice, current] = await Promise.all([
      number.experiment_running ? this.variants.assign(agent, { callId: input.call_id, callerNumber, at }) : null,
      this.currentReads(agent, callerNumber),
    ]);
    const dialled = await this.run(agent, choice?.version_id ?? null, callerNumber, at, current);
    const decision = dialled.simulation;
    const answeredBy = decision.answered_by.agent_id;
    let answering: { simulation: Simulation; configuration: RunConfiguration } | null = null;
    if (answeredBy === agent.id) answering = dialled;
    else if (answeredBy !== null)
      answering = await this.run(await this.access.resolve(auth, answeredBy, 'runtime:route'), null, callerNumber, at);
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

  /** The reads of `agent`'s current configuration for a call from `callerNumber`: one round trip. */
  private async currentReads(agent: Readonly<AgentRow>, callerNumber: string | null): Promise<CurrentReads> {
    const simulated: SimulatedAgent = { ...agent };
    const callers = callerNumber ? [callerNumber] : [];
    const current = await this.repository.currentConfiguration(agent, callers);
    return { simulated, current, surroundings: surroundingsFrom(simulated, current.surroundings, callers) };
  }

  /**
   * The decision of one agent's configuration (current, or stored version `versionId`) for this
   * call; `prefetched` is the current configuration's reads when they were made already.
   */
  private async run(
    agent: Readonly<AgentRow>,
    versionId: string | null,
    callerNumber: string | null,
    at: Date,
    prefetched?: CurrentReads,
  ): Promise<{ simulation: Simulation; configuration: RunConfiguration }> {
    let simulated: SimulatedAgent;
    let tools: ToolSnapshot[];
    let version: VersionRef | null;
    let workflow: unknown;
    let surroundings;
    const stored = versionId ? await this.repository.version(agent.id, versionId) : undefined;
    if (stored) {
      simulated = { ...agent };
      for (const name of CONFIGURATION_AGENT_FIELDS)
        if (name in stored.configuration) simulated[name] = stored.configuration[name];
      tools = stored.configuration.tools ?? [];
      workflow = stored.configuration.workflow ?? null;
      version = { id: stored.id, version: stored.version };
      surroundings = await this.simulator.configuration(simulated, callerNumber ? [callerNumber] : [], tools);
    } else {
      let current;
      ({ simulated, current, surroundings } = prefetched ?? (await this.currentReads(agent, callerNumber)));
      ({ tools, latest: version } = current);
      workflow = agent.workflow ?? null;
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
        tools,
        greeting: simulation!.greeting.text,
        greeting_variant_index: simulation!.greeting.variant_index,
      },
    };
  }
}
