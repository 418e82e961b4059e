import {
  assertPermission,
  isAgentAllowed,
  organizationsWith,
  reachableOrganizations,
  type AuthContext,
} from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError, type ErrorDetail } from '../../errors/index.js';
import { UNCONDITIONAL, type WriteConditions } from '../../api/entity-tag.js';
import type { Page } from '../../api/pagination.js';
import { assertWritePreconditions } from '../../api/write-preconditions.js';
import { requiresIfMatch } from '../organizations/organization.repository.js';
import { bodyField, parse } from '../../api/validate.js';
import type { AgentAccess } from './agent-access.js';
import { NO_CHANGE_GUARD, type AgentChangeGuard, type CheckedWrite } from './agent-change-guard.js';
import {
  agentCreateSchema,
  agentPatchSchema,
  CREATE_READ_ONLY_AGENT_FIELDS,
  parseStrict,
  READ_ONLY_AGENT_FIELDS,
} from './agent-input.schemas.js';
import { noteAuditResource } from '../../audit/request-context.js';
import { NEW_AGENT_DEFAULTS } from '../../db/agent-defaults.js';
import type { Knex } from 'knex';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import type { AgentVersionRecorder } from '../agent-versions/agent-version.recorder.js';
import { AgentReads } from './agent-reads.js';
import type { Agent, AgentRepository, AgentRow } from './agent.repository.js';
import { agentCreateError, agentDeleteError, agentUpdateError } from './agent-write-errors.js';
import { listAgentsQuery } from './agent.schemas.js';

export type AgentServiceOptions = {
  /** config.WEBHOOK_ALLOW_PRIVATE_TARGETS: lets post_call_webhook_url name local addresses (development only). */
  allowPrivateWebhookTargets: boolean;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class AgentService {
  private readonly patchSchema;
  private readonly createSchema;

  constructor(
    private readonly audited: AuditedTransactions,
    private readonly agents: AgentRepository,
    private readonly versions: AgentVersionRecorder,
    private readonly access: AgentAccess,
    private readonly clock: Clock,
    options: AgentServiceOptions,
    private readonly guard: AgentChangeGuard = NO_CHANGE_GUARD,
  ) {
    this.patchSchema = agentPatchSchema(options);
    this.createSchema = agentCreateSchema(options);
  }

  /** Agents of every organization where the caller may read agents, limited to the key's scope. */
  async list(auth: AuthContext, query: unknown): Promise<Page<Agent>> {
    assertPermission(auth, 'agents:read');
    const page = parse(listAgentsQuery, query, 'Invalid query parameters');
    return this.agents.list(organizationsWith(auth, 'agents:read'), auth.allowedAgentIds, page);
  }

  async get(auth: AuthContext, agentId: string): Promise<Agent> {
    return AgentReads.representation(await this.access.resolve(auth, agentId, 'agents:read'));
  }

  /**
   * Creates an agent (agents:write). Keys restricted to certain agents cannot create any; the
   * organization is `organization_id`, or the only one where the caller may write agents.
   */
  async create(auth: AuthContext, body: unknown): Promise<Agent> {
    assertPermission(auth, 'agents:write');
    if (auth.allowedAgentIds !== null)
      throw new ForbiddenError('An API key restricted to specific agents cannot create agents');
    const { data, details } = parseStrict(this.createSchema, body, CREATE_READ_ONLY_AGENT_FIELDS);
    const organizationId = this.targetOrganization(auth, bodyField(body, 'organization_id'), details);
    if (organizationId) {
      details.push(
        ...(await this.backupProblems(auth, bodyField(body, 'backup_agent_id'), {
          id: null,
          organization_id: organizationId,
        })),
      );
    }
    if (details.length > 0 || !data || !organizationId) throw new ValidationError('Request body is invalid', details);
    const { organization_id: _ignored, ...fields } = data;
    const now = this.clock.now();
    const row = await this.audited.transaction(async (trx) => {
      const created = await this.agents
        .with(trx)
        .create({ ...NEW_AGENT_DEFAULTS, ...fields, organization_id: organizationId, created_at: now, updated_at: now })
        .catch((error: unknown) => {
          throw agentCreateError(error);
        });
      noteAuditResource({ organizationId, agentId: created.id, resourceId: created.id });
      await this.versions.record(trx, created, auth, 'agent.created');
      return created;
    });
    return AgentReads.representation(row);
  }

  /**
   * Strict PATCH (agents:write): any unknown, read-only or invalid field refuses the whole request.
   * `If-Match` is checked against the locked row; a dry run answers the same and stores nothing.
   */
  async update(
    auth: AuthContext,
    agentId: string,
    body: unknown,
    conditions: WriteConditions = UNCONDITIONAL,
  ): Promise<CheckedWrite<Agent>> {
    const agent = await this.access.resolve(auth, agentId, 'agents:write');
    const data = await this.validatePatch(auth, agent, body);
    const { resource: row, failingTestCases } = await this.audited.transaction(
      async (trx) => {
        const current = await this.lockForWrite(trx, agent, conditions);
        if (Object.keys(data).length === 0) return { resource: current, failingTestCases: [] };
        const updated = await this.agents
          .with(trx)
          .update(agent.id, agent.organization_id, { ...data, updated_at: this.clock.now() })
          .catch((error: unknown) => {
            throw agentUpdateError(error);
          });
        if (!updated) throw new NotFoundError('Agent');
        await this.versions.record(trx, updated, auth, 'agent.updated');
        const failingTestCases = await this.guard.check(trx, updated, conditions.dryRun);
        return { resource: updated, failingTestCases };
      },
      { dryRun: conditions.dryRun },
    );
    if (!conditions.dryRun) await this.access.changed();
    return { resource: AgentReads.representation(row), failingTestCases };
  }

  /**
   * The agent's row locked for this write, after its `If-Match` (412) and the organization's rule
   * (428); restoring a version takes it too.
   */
  async lockForWrite(
    trx: Knex.Transaction,
    agent: { id: string; organization_id: string },
    conditions: WriteConditions,
  ): Promise<AgentRow> {
    const current = await this.agents.with(trx).findForUpdate(agent.id, agent.organization_id);
    if (!current) throw new NotFoundError('Agent');
    await assertWritePreconditions(trx, conditions, requiresIfMatch, {
      organizationId: agent.organization_id,
      current: AgentReads.representation(current),
    });
    return current;
  }

  /**
   * The PATCH rules (unknown, read-only and invalid fields, the backup agent) over `body`; the
   * fields to write, or a 400 listing every problem. Restoring a version uses the same rules.
   */
  async validatePatch(auth: AuthContext, agent: AgentRow, body: unknown): Promise<Record<string, unknown>> {
    const { data, details } = parseStrict(this.patchSchema, body, READ_ONLY_AGENT_FIELDS);
    details.push(...(await this.backupProblems(auth, bodyField(body, 'backup_agent_id'), agent)));
    if (details.length > 0 || !data) throw new ValidationError('Request body is invalid', details);
    return data;
  }

  /** 409 while another agent names this one as its backup. */
  async remove(auth: AuthContext, agentId: string, conditions: WriteConditions = UNCONDITIONAL): Promise<void> {
    const agent = await this.access.resolve(auth, agentId, 'agents:write');
    noteAuditResource({ organizationId: agent.organization_id });
    await this.audited.transaction(async (trx) => {
      await this.lockForWrite(trx, agent, conditions);
      const agents = this.agents.with(trx);
      const referrers = await agents.backupReferrers(agent.id, agent.organization_id);
      if (referrers.length > 0) {
        throw new ConflictError(
          'The agent is the backup of another agent; change that backup first',
          referrers.map((r) => ({ field: 'backup_agent_id', message: `Backup of agent ${r.id} (${r.name})` })),
        );
      }
      const deleted = await agents.delete(agent.id, agent.organization_id).catch((error: unknown) => {
        throw agentDeleteError(error);
      });
      if (!deleted) throw new NotFoundError('Agent');
    });
    await this.access.changed();
  }

  /** 404 for an organization out of reach, 403 without agents:write there; a missing id is a detail. */
  private targetOrganization(auth: AuthContext, value: unknown, details: ErrorDetail[]): string | undefined {
    if (typeof value === 'string') {
      if (!UUID.test(value)) return undefined;
      const id = value.toLowerCase();
      if (!reachableOrganizations(auth).includes(id)) throw new NotFoundError('Organization');
      assertPermission(auth, 'agents:write', id);
      return id;
    }
    if (value !== undefined) return undefined;
    const writable = organizationsWith(auth, 'agents:write');
    if (writable.length === 1) return writable[0];
    details.push({
      field: 'organization_id',
      message: 'Required when the caller can create agents in several organizations',
    });
    return undefined;
  }

  /** The backup must be another agent of the same organization, and one the caller may access. */
  private async backupProblems(
    auth: AuthContext,
    value: unknown,
    agent: { id: string | null; organization_id: string },
  ): Promise<ErrorDetail[]> {
    if (typeof value !== 'string' || !UUID.test(value)) return [];
    const id = value.toLowerCase();
    if (id === agent.id) return [{ field: 'backup_agent_id', message: 'An agent cannot be its own backup' }];
    const backup = await this.agents.findRef(id, [agent.organization_id]);
    if (!backup || !isAgentAllowed(auth, backup.id)) {
      return [{ field: 'backup_agent_id', message: 'Must be another agent of the same organization' }];
    }
    return [];
  }
}
