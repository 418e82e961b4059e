import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import { noteAuditResource } from '../../audit/request-context.js';
import type { EventRecorder } from '../../events/event-recorder.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import {
  ConflictError,
  NotFoundError,
  TestCasesFailedError,
  ValidationError,
  type ErrorDetail,
} from '../../errors/index.js';
import type { Page } from '../../api/pagination.js';
import { parse, parseBody } from '../../api/validate.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { AgentRow } from '../agents/agent.repository.js';
import { NO_DISCLOSURE } from '../agents/caller-disclosure.js';
import { callerNumbersOf, momentsOf, type CallSimulator } from '../simulation/call-simulator.js';
import type { SimulationRepository } from '../simulation/simulation.repository.js';
import type { SimulationService } from '../simulation/simulation.service.js';
import type { RoutedCall, VariantAssigner, VariantChoice } from '../runtime/route.service.js';
import { ONE_RUNNING, toExperiment, type ExperimentRepository, type ExperimentRow } from './experiment.repository.js';
import {
  CreateExperimentSchema,
  ListExperimentsQuery,
  type Experiment,
  type ExperimentResults,
  type ExperimentVariant,
} from './experiment.schemas.js';
import { assignVariant, stickyKey } from './variant-assignment.js';
import { experimentEvent, type ExperimentEnding } from './experiment-end.worker.js';
import { assembleResults, distributedFields } from './experiment-results.js';

const show = (value: unknown) => JSON.stringify(value);

/**
 * A/B experiments between configuration versions of an agent (agents:read to read, agents:write to
 * change). Starting one runs the agent's saved test cases against every variant; the route answer
 * assigns variants (`assign`) and the experiment ends itself at `ends_at` or after `max_calls`.
 */
export class ExperimentService implements VariantAssigner {
  constructor(
    private readonly deps: {
      audited: AuditedTransactions;
      experiments: ExperimentRepository;
      access: AgentAccess;
      simulations: SimulationService;
      simulator: CallSimulator;
      cases: SimulationRepository;
      clock: Clock;
      events: EventRecorder;
      ending: ExperimentEnding;
    },
  ) {}

  async list(auth: AuthContext, agentId: string, query: unknown): Promise<Page<Experiment>> {
    const agent = await this.deps.access.resolve(auth, agentId, 'agents:read');
    const page = parse(ListExperimentsQuery, query, 'Invalid query parameters');
    await this.deps.ending.endDue({ agentId: agent.id }, this.deps.clock.now());
    return this.deps.experiments.list(agent.id, page);
  }

  async get(auth: AuthContext, agentId: string, experimentId: string): Promise<Experiment> {
    const agent = await this.deps.access.resolve(auth, agentId, 'agents:read');
    await this.deps.ending.endDue({ agentId: agent.id }, this.deps.clock.now());
    return toExperiment(await this.found(agent.id, experimentId));
  }

  /**
   * Per variant: the reported calls whose call_id was routed to it (of this agent, trashed ones left
   * out), the done rate with its 95% Wilson interval and its two-proportion test against the first
   * variant, the average duration and the distribution of each enum and boolean outcome field.
   * Aggregated by PostgreSQL in one query, whatever the number of calls.
   */
  async results(auth: AuthContext, agentId: string, experimentId: string): Promise<ExperimentResults> {
    const agent = await this.deps.access.resolve(auth, agentId, 'agents:read');
    await this.deps.ending.endDue({ agentId: agent.id }, this.deps.clock.now());
    const experiment = await this.found(agent.id, experimentId);
    const fields = distributedFields(agent.analysis_fields ?? []);
    const rows = await this.deps.experiments.results(
      experiment,
      fields.map((f) => f.name),
    );
    return assembleResults(experiment, fields, rows);
  }

  async create(auth: AuthContext, agentId: string, body: unknown): Promise<Experiment> {
    const agent = await this.deps.access.resolve(auth, agentId, 'agents:write');
    const input = parseBody(CreateExperimentSchema, body);
    const now = this.deps.clock.now();
    const details: ErrorDetail[] = [];
    if (input.ends_at && new Date(input.ends_at) <= now)
      details.push({ field: 'ends_at', message: 'Must be in the future' });
    const variants: ExperimentVariant[] = [];
    for (const [i, v] of input.variants.entries()) {
      const version = v.version_id ? await this.deps.experiments.version(agent.id, v.version_id) : undefined;
      if (v.version_id && !version)
        details.push({ field: `variants.${i}.version_id`, message: 'No configuration version of this agent' });
      variants.push({
        name: v.name,
        version_id: version?.id ?? null,
        version: version?.version ?? null,
        current: v.current === true,
        weight: v.weight,
      });
    }
    if (details.length > 0) throw new ValidationError('Request body is invalid', details);
    const row = await this.deps.audited.transaction(async (trx) => {
      const created = await this.deps.experiments.with(trx).insert({
        organization_id: agent.organization_id,
        agent_id: agent.id,
        name: input.name,
        variants,
        sticky_by: input.sticky_by,
        ends_at: input.ends_at ? new Date(input.ends_at) : null,
        max_calls: input.max_calls ?? null,
        created_at: now,
        updated_at: now,
      });
      noteAuditResource({ organizationId: agent.organization_id, resourceId: created.id, agentId: agent.id });
      await this.deps.events.record(trx, experimentEvent('experiment.created', created, now));
      return created;
    });
    return toExperiment(row);
  }

  /**
   * 409 CONFLICT unless the experiment is a draft or while another one of the agent runs; 409
   * TEST_CASES_FAILED naming the variant and case when a saved test case fails against a variant.
   */
  async start(auth: AuthContext, agentId: string, experimentId: string): Promise<Experiment> {
    const agent = await this.deps.access.resolve(auth, agentId, 'agents:write');
    const now = this.deps.clock.now();
    await this.deps.ending.endDue({ agentId: agent.id }, now);
    const current = await this.found(agent.id, experimentId);
    if (current.status !== 'draft') throw new ConflictError(`The experiment is ${current.status}; only a draft starts`);
    if (current.ends_at && current.ends_at <= now) throw new ConflictError('The experiment ends_at has passed');
    await this.assertVariantsPass(agent, current);
    const row = await this.deps.audited
      .transaction(async (trx) => {
        const experiments = this.deps.experiments.with(trx);
        const locked = await experiments.findForUpdate(agent.id, experimentId);
        if (!locked || locked.status !== 'draft') throw new ConflictError('The experiment is no longer a draft');
        const started = await experiments.update(experimentId, { status: 'running', started_at: now, updated_at: now });
        await this.deps.events.record(trx, experimentEvent('experiment.started', started, now));
        return started;
      })
      .catch((error: unknown) => {
        if (isUniqueViolation(error, ONE_RUNNING))
          throw new ConflictError('Another experiment of this agent is running; stop it first');
        throw error;
      });
    // The next route answer on any instance assigns variants (it keeps whether one runs per number).
    await this.deps.access.changed();
    return toExperiment(row);
  }

  /** 409 unless it runs. */
  async stop(auth: AuthContext, agentId: string, experimentId: string): Promise<Experiment> {
    const agent = await this.deps.access.resolve(auth, agentId, 'agents:write');
    const now = this.deps.clock.now();
    await this.deps.ending.endDue({ agentId: agent.id }, now);
    const row = await this.deps.audited.transaction(async (trx) => {
      const experiments = this.deps.experiments.with(trx);
      const locked = await experiments.findForUpdate(agent.id, experimentId);
      if (!locked) throw new NotFoundError('Experiment');
      if (locked.status !== 'running') throw new ConflictError(`The experiment is ${locked.status}, not running`);
      const stopped = await experiments.update(experimentId, {
        status: 'stopped',
        end_reason: 'stopped',
        ended_at: now,
        updated_at: now,
      });
      await this.deps.events.record(trx, experimentEvent('experiment.stopped', stopped, now));
      return stopped;
    });
    await this.deps.access.changed();
    return toExperiment(row);
  }

  /** The route answer's variant: the call's earlier one, or a new one by the stable hash (counted). */
  async assign(agent: { id: string; organization_id: string }, call: RoutedCall): Promise<VariantChoice | null> {
    const running = await this.deps.experiments.running(agent.id);
    if (!running) return null;
    if (running.ends_at && new Date(running.ends_at) <= call.at) {
      await this.deps.ending.endDue({ agentId: agent.id }, call.at);
      return null;
    }
    const earlier = await this.deps.experiments.assigned(agent.organization_id, call.callId);
    const choose = (name: string) => {
      const variant = running.variants.find((v) => v.name === name);
      return variant
        ? { experiment_id: running.id, name: running.name, variant: name, version_id: variant.version_id }
        : null;
    };
    if (earlier) return earlier.experiment_id === running.id ? choose(earlier.variant) : null;
    const picked = assignVariant(
      running.id,
      stickyKey(running.sticky_by, call.callId, call.callerNumber),
      running.variants,
    );
    const stored = await this.deps.experiments.assign({
      organization: agent.organization_id,
      call: call.callId,
      experiment: running.id,
      variant: picked.name,
      at: call.at,
    });
    if (stored === undefined) return null;
    // The last call max_calls allows: the experiment ends now, with its event, rather than at the next pass.
    if (stored.last_call) await this.deps.ending.endDue({ agentId: agent.id }, call.at);
    return choose(stored.variant);
  }

  /** Every saved case against every variant's configuration; one 409 listing each failure. */
  private async assertVariantsPass(agent: Readonly<AgentRow>, experiment: ExperimentRow): Promise<void> {
    const cases = await this.deps.cases.listCases(agent.id);
    if (cases.length === 0) return;
    const details: ErrorDetail[] = [];
    for (const [i, variant] of experiment.variants.entries()) {
      const { simulated, surroundings } = await this.deps.simulations.configuration(
        agent,
        variant.version === null ? {} : { version: variant.version },
        callerNumbersOf(momentsOf(cases)),
      );
      const run = await this.deps.simulator.run(simulated, surroundings, cases, NO_DISCLOSURE);
      for (const result of run.results.filter((r) => !r.passed))
        for (const m of result.mismatches)
          details.push({
            field: `variants.${i}.test_cases.${result.id}.expect.${m.field}`,
            message: `Variant ${show(variant.name)}, "${result.name}": ${m.field} expected ${show(m.expected)}, got ${show(m.actual)}`,
            agent_id: agent.id,
            case_id: result.id,
            case_name: result.name,
            expected: m.expected,
            actual: m.actual,
          });
    }
    if (details.length > 0)
      throw new TestCasesFailedError(
        'A variant fails saved test cases of the agent; the experiment was not started',
        details,
      );
  }

  private async found(agentId: string, experimentId: string): Promise<ExperimentRow> {
    const row = await this.deps.experiments.find(agentId, experimentId);
    if (!row) throw new NotFoundError('Experiment');
    return row;
  }
}
