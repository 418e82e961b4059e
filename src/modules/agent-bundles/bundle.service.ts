import type { Knex } from 'knex';
import diff from 'microdiff';
import {
  assertPermission,
  isAgentAllowed,
  organizationsWith,
  reachableOrganizations,
  type AuthContext,
} from '../../auth/auth-context.js';
import type { Permission } from '../../auth/permissions.js';
import { noteAuditResource } from '../../audit/request-context.js';
import type { Clock } from '../../clock.js';
import { NEW_AGENT_DEFAULTS } from '../../db/agent-defaults.js';
import type { Db } from '../../db/knex.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { lockAgent } from '../../db/locks.js';
import { ForbiddenError, NotFoundError, ValidationError, type ErrorDetail } from '../../errors/index.js';
import { zodIssuesToDetails } from '../../errors/zod.js';
import { UNCONDITIONAL, type WriteConditions } from '../../api/entity-tag.js';
import { assertWritePreconditions } from '../../api/write-preconditions.js';
import { outgoingUrlProblem } from '../../outgoing/url-policy.js';
import { formatPath } from '../agent-versions/agent-configuration.js';
import type { AgentVersionRecorder } from '../agent-versions/agent-version.recorder.js';
import type { AgentAccess } from '../agents/agent-access.js';
import { NO_CHANGE_GUARD, type AgentChangeGuard, type CheckedWrite } from '../agents/agent-change-guard.js';
import {
  agentCreateSchema,
  agentPatchSchema,
  parseStrict,
  READ_ONLY_AGENT_FIELDS,
} from '../agents/agent-input.schemas.js';
import type { Agent, AgentRepository, AgentRow } from '../agents/agent.repository.js';
import { AgentReads } from '../agents/agent-reads.js';
import { agentCreateError, agentUpdateError } from '../agents/agent-write-errors.js';
import { LANGUAGES } from '../agents/agent.schemas.js';
import {
  EMPLOYEE_FIELD_COLUMNS,
  type Employee,
  type EmployeeFields,
  type EmployeeRepository,
} from '../employees/employee.repository.js';
import { CreateEmployeeSchema } from '../employees/employee.schemas.js';
import type { ForwardingSlotRepository } from '../forwarding-slots/forwarding-slot.repository.js';
import {
  duplicateSlotnummern,
  MAX_SLOTS,
  SlotRowSchema,
  type SlotInput,
} from '../forwarding-slots/forwarding-slot.schemas.js';
import type { KnowledgeBaseJobs } from '../knowledge-base/kb.worker.js';
import type { KnowledgeBaseRepository } from '../knowledge-base/knowledge-base.repository.js';
import { CreateChunksSchema, CreateDocumentSchema, type ChunkInput } from '../knowledge-base/knowledge-base.schemas.js';
import { textSearchConfig } from '../knowledge-base/text-search.js';
import { requiresIfMatch } from '../organizations/organization.repository.js';
import type { SimulationRepository } from '../simulation/simulation.repository.js';
import { MAX_TEST_CASES, TestCaseInputSchema, type TestCaseExpect } from '../simulation/simulation.schemas.js';
import { TOOL_CONFIG_SCHEMAS, TRANSFER_TOOL_TYPES, type ToolType } from '../tools/tool-config.schemas.js';
import type { ToolFields, ToolRepository } from '../tools/tool.repository.js';
import { CreateToolSchema } from '../tools/tool.schemas.js';
import { validateWorkflow } from '../workflows/workflow-rules.js';
import type { WorkflowRepository } from '../workflows/workflow.repository.js';
import type { Workflow } from '../workflows/workflow.schemas.js';
import { isSecretRef, maskSecrets, resolveSecrets } from './bundle-secrets.js';
import type { BundleRepository } from './bundle.repository.js';
import {
  AgentBundleInputSchema,
  BUNDLE_API_VERSION,
  BUNDLE_CONFIGURATION_FIELDS,
  SELF,
  type AgentBundle,
  type AgentBundleInput,
  type BundleChange,
  type BundleDocument,
  type BundleEmployee,
  type BundleTestCase,
  type BundleTool,
} from './bundle.schemas.js';
import { pick } from '../../db/pick.js';

/** What a bundle reads, and what writing one needs: every permission of the resources it holds. */
export const BUNDLE_READS: readonly Permission[] = [
  'agents:read',
  'tools:read',
  'employees:read',
  'forwarding:read',
  'kb:read',
];
export const BUNDLE_WRITES: readonly Permission[] = [
  'agents:write',
  'tools:write',
  'employees:write',
  'forwarding:write',
  'kb:write',
];

export type BundleServiceDeps = {
  db: Db;
  audited: AuditedTransactions;
  clock: Clock;
  access: AgentAccess;
  agents: AgentRepository;
  workflows: WorkflowRepository;
  tools: ToolRepository;
  employees: EmployeeRepository;
  slots: ForwardingSlotRepository;
  simulation: SimulationRepository;
  documents: KnowledgeBaseRepository;
  kbJobs: KnowledgeBaseJobs;
  bundles: BundleRepository;
  versions: AgentVersionRecorder;
  guard?: AgentChangeGuard;
  allowPrivateTargets: boolean;
};

type AgentRef = { id: string; organization_id: string };
type Secrets = Record<string, string>;

/** The agent as stored: its bundle with secrets in clear, and the ids behind the names. */
type Loaded = {
  bundle: AgentBundle;
  secrets: Secrets;
  masked: AgentBundle;
  ids: {
    tools: Map<string, string>;
    employees: Map<string, string>;
    documents: Map<string, string>;
    granted: Map<string, string>;
  };
};

/** A bundle checked against every rule, ready to write. `bundle` is what the agent exports afterwards. */
type Desired = {
  bundle: AgentBundle;
  fields: Record<string, unknown>;
  workflow: Workflow | null;
  tools: { fields: Omit<ToolFields, 'employee_id'>; employee: string | null }[];
  employees: EmployeeFields[];
  slots: SlotInput[];
  testCases: BundleTestCase[];
  documents: { title: string; content: string; language: string | null; chunks: ChunkInput[] | undefined }[];
  organizationDocuments: Map<string, string>;
};

const ALL = { page: 1, limit: 1_000_000 };

/** A tool's own fields (a bundle names the employee); built once: zod compiles a schema on its first parse. */
const BundleToolFieldsSchema = CreateToolSchema.omit({ employee_id: true });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function prefixed(details: ErrorDetail[], prefix: string): ErrorDetail[] {
  return details.map((d) => ({ ...d, field: d.field && d.field !== 'body' ? `${prefix}.${d.field}` : prefix }));
}

function byKey<T>(items: readonly T[], key: (item: T) => string): Record<string, T> {
  const out: Record<string, T> = {};
  for (const item of items) out[key(item)] = item;
  return out;
}

/** Lists keyed by what names them, so a change reads `spec.tools.lookup.config.url`, not a shifting index. */
function comparable(bundle: AgentBundle): Record<string, unknown> {
  const { spec } = bundle;
  return {
    ...bundle,
    spec: {
      ...spec,
      tools: byKey(spec.tools, (t) => t.name),
      employees: byKey(spec.employees, (e) => e.name),
      forwarding_slots: byKey(spec.forwarding_slots, (s) => s.slotnummer),
      knowledge_base: {
        documents: byKey(spec.knowledge_base.documents, (d) => d.title),
        organization_documents: [...spec.knowledge_base.organization_documents].sort(),
      },
    },
  };
}

/** Secret placeholders whose value the desired bundle changes say so (`changed: true`), never the value. */
function markChangedSecrets(value: unknown, desired: Secrets, current: Secrets): unknown {
  if (isSecretRef(value)) {
    const name = value.$secret;
    return desired[name] === current[name] ? value : { $secret: name, changed: true };
  }
  if (Array.isArray(value)) return value.map((v) => markChangedSecrets(v, desired, current));
  if (isObject(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, markChangedSecrets(v, desired, current)]));
  return value;
}

/** The changes from the stored agent to the desired one, credentials shown only as placeholders. */
export function bundleChanges(current: Loaded, desired: AgentBundle): BundleChange[] {
  const { masked, secrets } = maskSecrets(desired);
  const to = markChangedSecrets(comparable(masked), secrets, current.secrets) as Record<string, unknown>;
  const changes = diff(comparable(current.masked), to).map((d): BundleChange => {
    const path = formatPath(d.path);
    if (d.type === 'CREATE') return { path, op: 'add', to: d.value };
    if (d.type === 'REMOVE') return { path, op: 'remove', from: d.oldValue };
    return { path, op: 'change', from: d.oldValue, to: d.value };
  });
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

const same = (a: unknown, b: unknown) => diff({ v: a }, { v: b }).length === 0;

function emptyBundle(name: string): AgentBundle {
  return {
    api_version: BUNDLE_API_VERSION,
    kind: 'Agent',
    name,
    spec: {
      configuration: {} as AgentBundle['spec']['configuration'],
      workflow: null,
      tools: [],
      employees: [],
      forwarding_slots: [],
      test_cases: [],
      knowledge_base: { documents: [], organization_documents: [] },
    },
  };
}

const EMPTY_IDS = (): Loaded['ids'] => ({
  tools: new Map(),
  employees: new Map(),
  documents: new Map(),
  granted: new Map(),
});

/**
 * An agent as one document (GET .../bundle), and the writes that make an agent equal to one: import
 * (a new agent), apply (PUT .../bundle), clone. Every write is one transaction with one configuration
 * version; the rules are the ones each resource's own endpoints apply.
 */
export class BundleService {
  private readonly patchSchema;
  private readonly phoneSchema;
  private readonly guard: AgentChangeGuard;

  constructor(private readonly deps: BundleServiceDeps) {
    this.patchSchema = agentPatchSchema({ allowPrivateWebhookTargets: deps.allowPrivateTargets });
    this.phoneSchema = agentCreateSchema({ allowPrivateWebhookTargets: deps.allowPrivateTargets }).shape.phone_number;
    this.guard = deps.guard ?? NO_CHANGE_GUARD;
  }

  /** The agent's bundle (the reads of everything it holds); credentials as placeholders. */
  async export(auth: AuthContext, agentId: string): Promise<AgentBundle> {
    const agent = await this.resolve(auth, agentId, BUNDLE_READS);
    return (await this.load(this.deps.db, agent)).masked;
  }

  /**
   * Makes the agent equal to the bundle (every write permission of what it holds): one transaction,
   * one configuration version; `If-Match` takes the bundle's ETag (GET .../bundle).
   */
  async apply(
    auth: AuthContext,
    agentId: string,
    body: unknown,
    conditions: WriteConditions = UNCONDITIONAL,
  ): Promise<CheckedWrite<{ changes: BundleChange[] }>> {
    const agent = await this.resolve(auth, agentId, BUNDLE_WRITES);
    noteAuditResource({ organizationId: agent.organization_id, agentId: agent.id, resourceId: agent.id });
    const { bundle, secrets } = this.parseEnvelope(body, ['secrets']);
    const result = await this.deps.audited.transaction(
      async (trx) => {
        await lockAgent(trx, agent);
        const row = await this.deps.agents.with(trx).findForUpdate(agent.id, agent.organization_id);
        if (!row) throw new NotFoundError('Agent');
        const current = await this.load(trx, row);
        await assertWritePreconditions(trx, conditions, requiresIfMatch, {
          organizationId: agent.organization_id,
          current: current.masked,
        });
        const desired = await this.validate(trx, auth, row, bundle, secrets, current);
        const changes = bundleChanges(current, desired.bundle);
        if (changes.length === 0) return { resource: { changes }, failingTestCases: [] };
        await this.write(trx, row, current, desired, auth);
        await this.deps.versions.record(trx, row, auth, 'agent.updated');
        // A dry run names the cases the change would break (Test-Cases-Failed) instead of the 409.
        const failingTestCases = await this.guard.check(trx, row, conditions.dryRun);
        return { resource: { changes }, failingTestCases };
      },
      { dryRun: conditions.dryRun },
    );
    if (!conditions.dryRun && result.resource.changes.length > 0) await this.deps.access.changed();
    return result;
  }

  /**
   * A new agent from a bundle (every write permission in the target organization), with
   * `phone_number` and optionally `organization_id` beside the bundle. A dry run answers the changes.
   */
  async import(
    auth: AuthContext,
    body: unknown,
    conditions: WriteConditions = UNCONDITIONAL,
  ): Promise<{ agent: Agent; changes: BundleChange[]; failingTestCases: readonly string[] }> {
    const organizationId = this.targetOrganization(auth, isObject(body) ? body.organization_id : undefined);
    for (const permission of BUNDLE_WRITES) assertPermission(auth, permission, organizationId);
    const extra = ['secrets', 'phone_number', 'organization_id'];
    const { bundle, secrets, rest } = this.parseEnvelope(body, extra);
    return this.create(auth, organizationId, bundle, secrets, rest.phone_number, conditions);
  }

  /**
   * A copy of the agent under `name` and `phone_number`, in its organization or `organization_id`:
   * the reads in the source, agents:write in the target. Its credentials come along.
   */
  async clone(
    auth: AuthContext,
    agentId: string,
    body: unknown,
    conditions: WriteConditions = UNCONDITIONAL,
  ): Promise<{ agent: Agent; changes: BundleChange[]; failingTestCases: readonly string[] }> {
    const agent = await this.resolve(auth, agentId, BUNDLE_READS);
    const input = isObject(body) ? body : {};
    // The copy goes to the source's organization unless the body names another: agents:write there first.
    if (input.organization_id === undefined) assertPermission(auth, 'agents:write', agent.organization_id);
    const details: ErrorDetail[] = [];
    for (const key of Object.keys(input))
      if (!['name', 'phone_number', 'organization_id'].includes(key))
        details.push({ field: key, message: 'Unknown field' });
    if (typeof input.name !== 'string') details.push({ field: 'name', message: 'Required: a string' });
    if (details.length > 0) throw new ValidationError('Request body is invalid', details);
    const organizationId =
      input.organization_id === undefined
        ? agent.organization_id
        : this.targetOrganization(auth, input.organization_id);
    assertPermission(auth, 'agents:write', organizationId);
    if (auth.allowedAgentIds !== null)
      throw new ForbiddenError('An API key restricted to specific agents cannot create agents');
    const source = await this.load(this.deps.db, agent);
    const bundle: AgentBundleInput = { ...source.bundle, name: input.name as string };
    return this.create(auth, organizationId, bundle, source.secrets, input.phone_number, conditions);
  }

  /** Creates the agent of `bundle` in `organizationId` (templates and clones come through here too). */
  async create(
    auth: AuthContext,
    organizationId: string,
    bundle: AgentBundleInput,
    secrets: Secrets,
    phone: unknown,
    conditions: WriteConditions = UNCONDITIONAL,
  ): Promise<{ agent: Agent; changes: BundleChange[]; failingTestCases: readonly string[] }> {
    const phoneResult = this.phoneSchema.safeParse(phone);
    const phoneDetails = phoneResult.success ? [] : zodIssuesToDetails(phoneResult.error.issues, ['phone_number']);
    const now = this.deps.clock.now();
    const result = await this.deps.audited.transaction(
      async (trx) => {
        const placeholder: AgentRef = { id: '00000000-0000-0000-0000-000000000000', organization_id: organizationId };
        const desired = await this.validate(trx, auth, placeholder, bundle, secrets, undefined, phoneDetails);
        const row = await this.deps.agents
          .with(trx)
          .create({
            ...NEW_AGENT_DEFAULTS,
            ...desired.fields,
            name: desired.bundle.name,
            phone_number: phoneResult.data,
            organization_id: organizationId,
            created_at: now,
            updated_at: now,
          })
          .catch((error: unknown) => {
            throw agentCreateError(error);
          });
        noteAuditResource({ organizationId, agentId: row.id, resourceId: row.id });
        // The agent's fields are written with it: only its resources remain to create.
        const fresh = emptyBundle(desired.bundle.name);
        fresh.spec.configuration = desired.bundle.spec.configuration;
        const current: Loaded = { bundle: fresh, secrets: {}, masked: fresh, ids: EMPTY_IDS() };
        await this.write(trx, row, current, desired, auth);
        await this.deps.versions.record(trx, row, auth, 'agent.created');
        const failingTestCases = await this.guard.check(trx, row, conditions.dryRun);
        const created = await this.deps.agents.with(trx).findForUpdate(row.id, organizationId);
        if (!created) throw new NotFoundError('Agent');
        const empty: Loaded = { bundle: emptyBundle(''), secrets: {}, masked: emptyBundle(''), ids: EMPTY_IDS() };
        return {
          agent: AgentReads.representation(created),
          changes: bundleChanges(empty, desired.bundle),
          failingTestCases,
        };
      },
      { dryRun: conditions.dryRun },
    );
    if (!conditions.dryRun) await this.deps.access.changed();
    return result;
  }

  /** The agent (the first permission through the agent check, the others in its organization). */
  private async resolve(auth: AuthContext, agentId: string, permissions: readonly Permission[]): Promise<AgentRow> {
    const agent = await this.deps.access.resolve(auth, agentId, permissions[0]!);
    for (const permission of permissions.slice(1)) assertPermission(auth, permission, agent.organization_id);
    return agent as AgentRow;
  }

  /** 404 for an organization out of reach; without one, the only organization where the caller writes agents. */
  private targetOrganization(auth: AuthContext, value: unknown): string {
    if (auth.allowedAgentIds !== null)
      throw new ForbiddenError('An API key restricted to specific agents cannot create agents');
    if (value === undefined) {
      const writable = organizationsWith(auth, 'agents:write');
      if (writable.length === 1) return writable[0]!;
      if (writable.length === 0) assertPermission(auth, 'agents:write');
      throw new ValidationError('Request body is invalid', [
        { field: 'organization_id', message: 'Required when the caller can create agents in several organizations' },
      ]);
    }
    if (typeof value !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value))
      throw new ValidationError('Request body is invalid', [{ field: 'organization_id', message: 'Must be a UUID' }]);
    const id = value.toLowerCase();
    if (!reachableOrganizations(auth).includes(id)) throw new NotFoundError('Organization');
    return id;
  }

  /** The bundle's own shape (unknown fields anywhere are a 400 naming them) and the request's extras. */
  private parseEnvelope(
    body: unknown,
    extras: string[],
  ): { bundle: AgentBundleInput; secrets: Secrets; rest: Record<string, unknown> } {
    const input = isObject(body) ? body : {};
    const rest: Record<string, unknown> = {};
    const document: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(input)) (extras.includes(key) ? rest : document)[key] = value;
    const details: ErrorDetail[] = [];
    const secrets = rest.secrets ?? {};
    if (!isObject(secrets) || Object.values(secrets).some((v) => typeof v !== 'string'))
      details.push({ field: 'secrets', message: 'Must be an object of strings' });
    const parsed = AgentBundleInputSchema.safeParse(document);
    if (!parsed.success) details.push(...zodIssuesToDetails(parsed.error.issues));
    if (details.length > 0 || !parsed.success) throw new ValidationError('Request body is invalid', details);
    return { bundle: parsed.data, secrets: secrets as Secrets, rest };
  }

  /** The stored agent as a bundle (run inside the write's transaction when it is one). */
  private async load(db: Db | Knex.Transaction, row: AgentRow): Promise<Loaded> {
    const trx = db as Knex.Transaction;
    const inTrx = db !== this.deps.db;
    const repo = <T extends { with(t: Knex.Transaction): T }>(r: T): T => (inTrx ? r.with(trx) : r);
    const agent = { ...AgentReads.representation(row) } as Record<string, unknown>;
    const agentNames = new Map(
      (await repo(this.deps.bundles).agentNames(row.organization_id)).map((a) => [a.id, a.name] as const),
    );
    const employees = (await repo(this.deps.employees).list(row.id, {}, ALL)).data;
    const employeeNames = new Map(employees.map((e) => [e.id, e.name] as const));
    const tools = await repo(this.deps.tools).list(row.id);
    const slots = await repo(this.deps.slots).list(row.id);
    const cases = await repo(this.deps.simulation).listCases(row.id);
    const documents = await repo(this.deps.bundles).ownDocuments(row);
    const chunks = await repo(this.deps.bundles).chunksOf(
      row.organization_id,
      documents.filter((d) => d.chunk_source === 'client').map((d) => d.id),
    );
    const granted = await repo(this.deps.bundles).grantedDocuments(row);

    const configuration: Record<string, unknown> = {};
    for (const field of BUNDLE_CONFIGURATION_FIELDS) configuration[field] = agent[field];
    configuration.backup_agent = row.backup_agent_id
      ? (agentNames.get(row.backup_agent_id) ?? row.backup_agent_id)
      : null;

    const bundleTools: BundleTool[] = tools.map((t) => {
      const config = { ...(t.config as Record<string, unknown>) };
      if (t.tool_type === 'switch_agent' && typeof config.target_agent_id === 'string') {
        const { target_agent_id: target, ...others } = config;
        return toolOf(t, { ...others, target_agent: agentNames.get(target as string) ?? target }, employeeNames);
      }
      return toolOf(t, config, employeeNames);
    });

    const named = (id: string | null | undefined, names: Map<string, string>) =>
      id === null || id === undefined ? id : (names.get(id) ?? id);
    const testCases: BundleTestCase[] = cases.map((c) => {
      const { answered_by_agent_id, transfer_employee_id, ...expect } = c.expect;
      const out: BundleTestCase['expect'] = { ...expect };
      if (answered_by_agent_id !== undefined)
        out.answered_by_agent = answered_by_agent_id === row.id ? SELF : named(answered_by_agent_id, agentNames);
      if (transfer_employee_id !== undefined) out.transfer_employee = named(transfer_employee_id, employeeNames);
      return { name: c.name, input: c.input, expect: out };
    });

    const bundle: AgentBundle = {
      api_version: BUNDLE_API_VERSION,
      kind: 'Agent',
      name: row.name,
      spec: {
        configuration: configuration as AgentBundle['spec']['configuration'],
        workflow: row.workflow ?? null,
        tools: bundleTools,
        employees: employees.map(employeeOf),
        forwarding_slots: slots.map((s) => ({
          slotnummer: s.slotnummer,
          cases: s.cases,
          slot_belegung: s.slot_belegung,
          prioritaet_1: s.prioritaet_1,
          prioritaet_2: s.prioritaet_2,
          prioritaet_3: s.prioritaet_3,
          kunde: s.kunde,
        })),
        test_cases: testCases,
        knowledge_base: {
          documents: documents.map((d): BundleDocument => {
            const out: BundleDocument = { title: d.title, content: d.content ?? '', language: d.language };
            if (d.chunk_source === 'client') {
              out.chunks = chunks
                .filter((c) => c.document_id === d.id)
                .map((c) => ({
                  chunk_index: c.position,
                  content: c.content,
                  ...(c.token_count === null ? {} : { token_count: c.token_count }),
                  ...(c.metadata === null ? {} : { metadata: c.metadata }),
                }));
            }
            return out;
          }),
          organization_documents: granted.map((g) => g.title),
        },
      },
    };
    const { masked, secrets } = maskSecrets(bundle);
    return {
      bundle,
      secrets,
      masked,
      ids: {
        tools: new Map(tools.map((t) => [t.name, t.id])),
        employees: new Map(employees.map((e) => [e.name, e.id])),
        documents: new Map(documents.map((d) => [d.title, d.id])),
        granted: new Map(granted.map((g) => [g.title, g.id])),
      },
    };
  }

  /**
   * Every rule of every resource over the bundle, all problems in one 400 with their paths
   * (`spec.tools[2].config.url`); secrets resolved. `agent.id` is the agent written (a placeholder
   * for a new one).
   */
  private async validate(
    trx: Knex.Transaction,
    auth: AuthContext,
    agent: AgentRef,
    input: AgentBundleInput,
    given: Secrets,
    current: Loaded | undefined,
    initial: ErrorDetail[] = [],
  ): Promise<Desired> {
    const details: ErrorDetail[] = [...initial];
    const bundle = resolveSecrets(input, given, current?.secrets ?? {}, '', details) as AgentBundleInput;
    const { spec } = bundle;
    const agents = await this.deps.bundles.with(trx).agentNames(agent.organization_id);
    const agentByName = new Map<string, string[]>();
    for (const a of agents) agentByName.set(a.name, [...(agentByName.get(a.name) ?? []), a.id]);
    const agentId = (name: string, field: string): string | undefined => {
      const ids = (agentByName.get(name) ?? []).filter((id) => id !== agent.id);
      if (ids.length === 1 && isAgentAllowed(auth, ids[0]!)) return ids[0];
      details.push({
        field,
        message:
          ids.length > 1
            ? `Several agents of the organization are named "${name}"`
            : `No other agent named "${name}" in the organization`,
      });
      return undefined;
    };

    // The agent's fields, through the PATCH rules.
    const { backup_agent: backup, ...configuration } = spec.configuration as Record<string, unknown>;
    const patch = parseStrict(this.patchSchema, { ...configuration, name: bundle.name }, READ_ONLY_AGENT_FIELDS);
    details.push(
      ...patch.details.map((d) => ({ ...d, field: d.field === 'name' ? 'name' : `spec.configuration.${d.field}` })),
    );
    const fields: Record<string, unknown> = { ...(patch.data ?? {}) };
    delete fields.name;
    if (typeof backup === 'string') fields.backup_agent_id = agentId(backup, 'spec.configuration.backup_agent') ?? null;
    else if (backup === null || !current) fields.backup_agent_id = null;

    // Employees: the create rules, unique names, the organization's emergency areas.
    const employees: EmployeeFields[] = [];
    const seenEmployees = new Set<string>();
    const areas = spec.employees.some((e) => e.notdienst_bereich)
      ? await this.deps.employees.with(trx).notdienstBereiche(agent.organization_id)
      : [];
    spec.employees.forEach((e, i) => {
      const at = `spec.employees[${i}]`;
      const parsed = CreateEmployeeSchema.safeParse(e);
      if (!parsed.success) return details.push(...prefixed(zodIssuesToDetails(parsed.error.issues), at));
      if (seenEmployees.has(parsed.data.name))
        details.push({ field: `${at}.name`, message: `Another employee is named "${parsed.data.name}"` });
      seenEmployees.add(parsed.data.name);
      const bereich = parsed.data.notdienst_bereich;
      if (bereich !== null && parsed.data.status !== 'notdienst')
        details.push({ field: `${at}.notdienst_bereich`, message: 'Only allowed while status is notdienst' });
      else if (bereich !== null && areas.length > 0 && !areas.includes(bereich))
        details.push({
          field: `${at}.notdienst_bereich`,
          message: `Must be one of the organization's areas: ${areas.join(', ')}`,
        });
      employees.push(parsed.data as EmployeeFields);
    });
    const employeeByName = new Map(employees.map((e) => [e.name, e]));

    // Tools: the create rules, the config of their type, references by name.
    const tools: Desired['tools'] = [];
    const seenTools = new Set<string>();
    for (const [i, tool] of spec.tools.entries()) {
      const at = `spec.tools[${i}]`;
      const problems: ErrorDetail[] = [];
      const config: Record<string, unknown> = { ...tool.config };
      if (tool.tool_type === 'switch_agent') {
        if ('target_agent_id' in config)
          problems.push({ field: 'config.target_agent_id', message: 'A bundle names the target: target_agent' });
        const target = config.target_agent;
        delete config.target_agent;
        if (typeof target === 'string') {
          const id = agentId(target, `${at}.config.target_agent`);
          config.target_agent_id = id ?? '00000000-0000-0000-0000-000000000000';
        } else problems.push({ field: 'config.target_agent', message: 'Required: the target agent by name' });
      }
      const base = BundleToolFieldsSchema.safeParse({ ...tool, config, employee: undefined });
      if (!base.success) problems.push(...zodIssuesToDetails(base.error.issues));
      const typed = TOOL_CONFIG_SCHEMAS[tool.tool_type as ToolType].safeParse(config);
      if (!typed.success) problems.push(...zodIssuesToDetails(typed.error.issues, ['config']));
      let value = (typed.success ? typed.data : config) as Record<string, unknown>;
      if (seenTools.has(tool.name)) problems.push({ field: 'name', message: `Another tool is named "${tool.name}"` });
      seenTools.add(tool.name);
      const isTransfer = TRANSFER_TOOL_TYPES.includes(tool.tool_type as ToolType);
      const linked = tool.employee ?? null;
      if (linked !== null) {
        const employee = employeeByName.get(linked);
        if (!isTransfer)
          problems.push({
            field: 'employee',
            message: `Only ${TRANSFER_TOOL_TYPES.join(' and ')} tools link an employee`,
          });
        else if (!employee) problems.push({ field: 'employee', message: `No employee named "${linked}"` });
        else if (!employee.phone_number)
          problems.push({ field: 'employee', message: 'The employee has no phone number' });
        else value = { ...value, phone_number: employee.phone_number };
      } else if (isTransfer && typeof value.phone_number !== 'string') {
        problems.push({ field: 'config.phone_number', message: 'Required unless the tool is linked to an employee' });
      }
      const urls =
        tool.tool_type === 'http_request'
          ? ['url']
          : tool.tool_type === 'identify_caller'
            ? ['lookup_url', 'fetch_case_url', 'verify_plz_url']
            : [];
      for (const name of urls) {
        if (typeof value[name] !== 'string') continue;
        const problem = outgoingUrlProblem(value[name], { allowPrivate: this.deps.allowPrivateTargets });
        if (problem) problems.push({ field: `config.${name}`, message: problem });
      }
      details.push(...prefixed(problems, at));
      if (base.success)
        tools.push({ fields: { ...base.data, config: value } as Desired['tools'][number]['fields'], employee: linked });
    }
    const toolNames = new Set(spec.tools.map((t) => t.name));

    // The workflow names tools of the bundle.
    let workflow: Workflow | null = null;
    if (spec.workflow !== null && spec.workflow !== undefined) {
      const checked = validateWorkflow(spec.workflow, toolNames);
      details.push(...prefixed(checked.details, 'spec.workflow'));
      workflow = checked.workflow ?? null;
    }

    // Forwarding slots.
    if (spec.forwarding_slots.length > MAX_SLOTS)
      details.push({ field: 'spec.forwarding_slots', message: `At most ${MAX_SLOTS} slots` });
    details.push(
      ...duplicateSlotnummern(spec.forwarding_slots).map((d) => ({ ...d, field: `spec.forwarding_${d.field}` })),
    );
    const slots: SlotInput[] = [];
    spec.forwarding_slots.forEach((s, i) => {
      const parsed = SlotRowSchema.safeParse(s);
      if (parsed.success) slots.push(parsed.data);
      else details.push(...prefixed(zodIssuesToDetails(parsed.error.issues), `spec.forwarding_slots[${i}]`));
    });

    // Test cases: their own rules; agents and employees by name.
    if (spec.test_cases.length > MAX_TEST_CASES)
      details.push({ field: 'spec.test_cases', message: `At most ${MAX_TEST_CASES} test cases` });
    const testCases: BundleTestCase[] = [];
    const placeholderId = '00000000-0000-0000-0000-000000000000';
    spec.test_cases.forEach((c, i) => {
      const at = `spec.test_cases[${i}]`;
      const { answered_by_agent, transfer_employee, ...expect } = c.expect;
      const probe: Record<string, unknown> = { ...expect };
      if (answered_by_agent !== undefined) {
        probe.answered_by_agent_id = answered_by_agent === null ? null : placeholderId;
        if (answered_by_agent !== null && answered_by_agent !== SELF)
          agentId(answered_by_agent, `${at}.expect.answered_by_agent`);
      }
      if (transfer_employee !== undefined) {
        probe.transfer_employee_id = transfer_employee === null ? null : placeholderId;
        if (transfer_employee !== null && !employeeByName.has(transfer_employee))
          details.push({
            field: `${at}.expect.transfer_employee`,
            message: `No employee named "${transfer_employee}"`,
          });
      }
      const parsed = TestCaseInputSchema.safeParse({ name: c.name, input: c.input, expect: probe });
      if (!parsed.success) return details.push(...prefixed(zodIssuesToDetails(parsed.error.issues), at));
      const { answered_by_agent_id: _a, transfer_employee_id: _t, ...checked } = parsed.data.expect;
      const out: BundleTestCase['expect'] = { ...checked };
      if (answered_by_agent !== undefined) out.answered_by_agent = answered_by_agent;
      if (transfer_employee !== undefined) out.transfer_employee = transfer_employee;
      testCases.push({ name: parsed.data.name, input: parsed.data.input, expect: out });
    });

    // Knowledge base: own documents (unique titles), granted organization documents by title.
    const documents: Desired['documents'] = [];
    const seenTitles = new Set<string>();
    const chunkSchema = CreateChunksSchema.shape.chunks.element;
    spec.knowledge_base.documents.forEach((d, i) => {
      const at = `spec.knowledge_base.documents[${i}]`;
      const parsed = CreateDocumentSchema.safeParse({ title: d.title, content: d.content });
      if (!parsed.success) details.push(...prefixed(zodIssuesToDetails(parsed.error.issues), at));
      const language = d.language ?? null;
      if (language !== null && !(LANGUAGES as readonly string[]).includes(language))
        details.push({ field: `${at}.language`, message: `Must be one of ${LANGUAGES.join(', ')} or null` });
      if (seenTitles.has(d.title))
        details.push({ field: `${at}.title`, message: `Another document is titled "${d.title}"` });
      seenTitles.add(d.title);
      let chunks: ChunkInput[] | undefined = d.content === '' && d.chunks === undefined ? [] : undefined;
      if (d.chunks !== undefined) {
        chunks = [];
        const indexes = new Set<number>();
        d.chunks.forEach((c, j) => {
          const chunk = chunkSchema.safeParse(c);
          if (!chunk.success)
            return details.push(...prefixed(zodIssuesToDetails(chunk.error.issues), `${at}.chunks[${j}]`));
          if (indexes.has(chunk.data.chunk_index))
            details.push({ field: `${at}.chunks[${j}].chunk_index`, message: 'Repeats an earlier chunk_index' });
          indexes.add(chunk.data.chunk_index);
          chunks!.push(chunk.data);
        });
      }
      documents.push({ title: d.title, content: d.content, language, chunks });
    });
    const organizationDocuments = new Map<string, string>();
    const orgDocs = await this.deps.bundles.with(trx).organizationDocuments(agent.organization_id);
    spec.knowledge_base.organization_documents.forEach((title, i) => {
      const matches = orgDocs.filter((d) => d.title === title);
      if (matches.length === 1) organizationDocuments.set(title, matches[0]!.id);
      else
        details.push({
          field: `spec.knowledge_base.organization_documents[${i}]`,
          message:
            matches.length === 0
              ? `No organization document titled "${title}"`
              : `Several organization documents are titled "${title}"`,
        });
    });

    if (details.length > 0) throw new ValidationError('The bundle cannot be stored', details);

    // What the agent exports once written: the values as the rules normalised them.
    const normalized: AgentBundle = {
      ...bundle,
      spec: {
        configuration: {
          ...current?.bundle.spec.configuration,
          ...(spec.configuration as AgentBundle['spec']['configuration']),
          backup_agent:
            backup === undefined
              ? (current?.bundle.spec.configuration.backup_agent ?? null)
              : (backup as string | null),
        },
        workflow,
        tools: tools.map((t, i) => {
          const config = { ...t.fields.config };
          if (spec.tools[i]!.tool_type === 'switch_agent') {
            delete config.target_agent_id;
            config.target_agent = spec.tools[i]!.config?.target_agent;
          }
          return {
            name: t.fields.name,
            display_name: t.fields.display_name,
            description: t.fields.description,
            tool_type: t.fields.tool_type,
            config,
            is_enabled: t.fields.is_enabled,
            priority: t.fields.priority,
            employee: t.employee,
          };
        }),
        employees: employees.map((e) => employeeOf(e as Employee)),
        forwarding_slots: slots,
        test_cases: testCases,
        knowledge_base: {
          documents: documents.map((d) => ({
            title: d.title,
            content: d.content,
            language: d.language,
            ...(d.chunks === undefined
              ? {}
              : {
                  chunks: [...d.chunks]
                    .sort((a, b) => a.chunk_index - b.chunk_index)
                    .map((c) => ({
                      chunk_index: c.chunk_index,
                      content: c.content,
                      ...(c.token_count === undefined ? {} : { token_count: c.token_count }),
                      ...(c.metadata === undefined ? {} : { metadata: c.metadata }),
                    })),
                }),
          })),
          organization_documents: spec.knowledge_base.organization_documents,
        },
      },
    };
    // The configuration as stored: the PATCH rules may normalise values (trimmed names...).
    for (const f of BUNDLE_CONFIGURATION_FIELDS)
      if (f in fields) (normalized.spec.configuration as Record<string, unknown>)[f] = fields[f];
    return {
      bundle: normalized,
      fields,
      workflow,
      tools,
      employees,
      slots,
      testCases,
      documents,
      organizationDocuments,
    };
  }

  /** The writes from `current` to `desired`, in the order references need (inside the transaction). */
  private async write(
    trx: Knex.Transaction,
    agent: AgentRow,
    current: Loaded,
    desired: Desired,
    auth: AuthContext,
  ): Promise<void> {
    void auth;
    const now = this.deps.clock.now();
    const cur = current.bundle.spec;
    const next = desired.bundle.spec;
    const ref = { id: agent.id, organization_id: agent.organization_id };

    if (!same(cur.configuration, next.configuration) || current.bundle.name !== desired.bundle.name) {
      const updated = await this.deps.agents
        .with(trx)
        .update(agent.id, agent.organization_id, { ...desired.fields, name: desired.bundle.name, updated_at: now })
        .catch((error: unknown) => {
          throw agentUpdateError(error);
        });
      if (!updated) throw new NotFoundError('Agent');
    }

    // Tools that go first (they may link employees that go), then employees, tools, leftover employees.
    const tools = this.deps.tools.with(trx);
    const nextTools = byKey(next.tools, (t) => t.name);
    for (const [name, id] of current.ids.tools) if (!nextTools[name]) await tools.delete(agent.id, id);

    const employees = this.deps.employees.with(trx);
    const employeeIds = new Map(current.ids.employees);
    const curEmployees = byKey(cur.employees, (e) => e.name);
    for (const fields of desired.employees) {
      const id = employeeIds.get(fields.name);
      if (id === undefined) employeeIds.set(fields.name, (await employees.insert(agent.id, fields, now)).id);
      else if (!same(curEmployees[fields.name], employeeOf(fields as Employee)))
        await employees.update(agent.id, id, fields, now);
    }

    const curTools = byKey(cur.tools, (t) => t.name);
    for (const [i, tool] of desired.tools.entries()) {
      const fields: ToolFields = {
        ...tool.fields,
        employee_id: tool.employee === null ? null : (employeeIds.get(tool.employee) ?? null),
      };
      const id = current.ids.tools.get(tool.fields.name);
      if (id === undefined) await tools.insert(ref, fields, now);
      else if (!same(curTools[tool.fields.name], next.tools[i])) await tools.update(agent.id, id, fields, now);
    }

    const nextEmployees = new Set(desired.employees.map((e) => e.name));
    for (const [name, id] of current.ids.employees) if (!nextEmployees.has(name)) await employees.delete(agent.id, id);

    if (!same(cur.workflow, next.workflow))
      await this.deps.workflows.with(trx).save(agent.id, agent.organization_id, desired.workflow, now);

    if (!same(cur.forwarding_slots, next.forwarding_slots)) {
      const slots = this.deps.slots.with(trx);
      await slots.lock(agent.id);
      await slots.replaceAll(agent.id, desired.slots, now);
    }

    if (!same(cur.test_cases, next.test_cases)) {
      const cases = this.deps.simulation.with(trx);
      await cases.lockCases(agent.id);
      await this.deps.bundles.with(trx).deleteTestCases(ref);
      const agentIds = new Map(
        (await this.deps.bundles.with(trx).agentNames(agent.organization_id)).map((a) => [a.name, a.id]),
      );
      for (const c of desired.testCases) {
        const { answered_by_agent, transfer_employee, ...rest } = c.expect;
        const expect: TestCaseExpect = { ...rest };
        if (answered_by_agent !== undefined)
          expect.answered_by_agent_id =
            answered_by_agent === null
              ? null
              : answered_by_agent === SELF
                ? agent.id
                : agentIds.get(answered_by_agent)!;
        if (transfer_employee !== undefined)
          expect.transfer_employee_id = transfer_employee === null ? null : employeeIds.get(transfer_employee)!;
        await cases.insertCase(ref, { name: c.name, input: c.input, expect }, now);
      }
    }

    const documents = this.deps.documents.with(trx);
    const curDocuments = byKey(cur.knowledge_base.documents, (d) => d.title);
    const nextDocuments = byKey(next.knowledge_base.documents, (d) => d.title);
    for (const [title, id] of current.ids.documents)
      if (!same(curDocuments[title], nextDocuments[title])) await documents.delete(agent.organization_id, id);
    for (const d of desired.documents) {
      if (same(curDocuments[d.title], nextDocuments[d.title])) continue;
      const client = d.chunks !== undefined;
      const created = await documents.insert({
        organization_id: agent.organization_id,
        agent_id: agent.id,
        scope: 'agent',
        title: d.title,
        content: d.content,
        language: d.language,
        ...(client ? { chunk_source: 'client' as const, status: 'ready' } : {}),
        created_at: now,
        updated_at: now,
      });
      if (!client) await this.deps.kbJobs.enqueue(created.id, trx);
      else if (d.chunks!.length > 0)
        await documents.insertClientChunks(
          created,
          d.chunks!,
          textSearchConfig(d.language ?? (desired.fields.language as string | null)),
          now,
        );
    }

    const bundles = this.deps.bundles.with(trx);
    for (const [title, id] of current.ids.granted)
      if (!desired.organizationDocuments.has(title)) await bundles.revoke(agent.organization_id, id, agent.id);
    for (const [title, id] of desired.organizationDocuments)
      if (!current.ids.granted.has(title)) await bundles.grant(agent.organization_id, id, agent.id, now);
  }
}

function toolOf(
  t: {
    name: string;
    display_name: string | null;
    description: string | null;
    tool_type: string;
    is_enabled: boolean;
    priority: number;
    employee_id: string | null;
  },
  config: Record<string, unknown>,
  employeeNames: Map<string, string>,
): BundleTool {
  return {
    name: t.name,
    display_name: t.display_name,
    description: t.description,
    tool_type: t.tool_type as BundleTool['tool_type'],
    config,
    is_enabled: t.is_enabled,
    priority: t.priority,
    employee: t.employee_id === null ? null : (employeeNames.get(t.employee_id) ?? t.employee_id),
  };
}

function employeeOf(e: EmployeeFields): BundleEmployee {
  return pick(e, EMPLOYEE_FIELD_COLUMNS);
}
