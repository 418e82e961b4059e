import { assertPermission, organizationsWith, targetOrganization, type AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError, type ErrorDetail } from '../../errors/index.js';
import { zodIssuesToDetails } from '../../errors/zod.js';
import { parseBody } from '../../api/validate.js';
import { AgentBundleInputSchema } from '../agent-bundles/bundle.schemas.js';
import type { BundleService } from '../agent-bundles/bundle.service.js';
import type { Agent } from '../agents/agent.repository.js';
import { toTemplate, type TemplateRepository } from './template.repository.js';
import { AgentFromTemplateSchema, CreateTemplateSchema, PLACEHOLDER } from './template.schemas.js';

type Template = ReturnType<typeof toTemplate>;

/** Every string of `value` with its path (`spec.tools[0].description`). */
function strings(value: unknown, path: string, out: { path: string; text: string }[] = []) {
  if (typeof value === 'string') out.push({ path, text: value });
  else if (Array.isArray(value)) value.forEach((v, i) => strings(v, `${path}[${i}]`, out));
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) strings(v, path ? `${path}.${k}` : k, out);
  return out;
}

function fill(value: unknown, values: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(PLACEHOLDER, (_, name: string) => values[name] ?? '');
  if (Array.isArray(value)) return value.map((v) => fill(v, values));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, values)]));
  return value;
}

/**
 * Agent templates (organization-level): a bundle with {{placeholders}} and the variables it declares;
 * POST /v1/agents with `template_id` creates an agent from one.
 */
export class TemplateService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly templates: TemplateRepository,
    private readonly bundles: BundleService,
    private readonly clock: Clock,
  ) {}

  /** The templates of every organization where the caller reads agents (agents:read). */
  async list(auth: AuthContext): Promise<{ data: Template[] }> {
    assertPermission(auth, 'agents:read');
    return { data: (await this.templates.list(organizationsWith(auth, 'agents:read'))).map(toTemplate) };
  }

  /** agents:write; every {{placeholder}} must be a declared variable, the bundle shaped as one. */
  async create(auth: AuthContext, body: unknown): Promise<Template> {
    assertPermission(auth, 'agents:write');
    const input = parseBody(CreateTemplateSchema, body);
    const organizationId = this.organization(auth, input.organization_id);
    const details: ErrorDetail[] = [];
    const declared = new Set<string>();
    input.variables.forEach((v, i) => {
      if (declared.has(v.name)) details.push({ field: `variables[${i}].name`, message: `${v.name} is declared twice` });
      declared.add(v.name);
    });
    for (const { path, text } of strings(input.bundle, 'bundle'))
      for (const [, name] of text.matchAll(PLACEHOLDER))
        if (!declared.has(name!)) details.push({ field: path, message: `{{${name}}} is not a declared variable` });
    if (details.length > 0) throw new ValidationError('Request body is invalid', details);
    const now = this.clock.now();
    const row = await this.audited.transaction((trx) =>
      this.templates
        .with(trx)
        .insert({
          organization_id: organizationId,
          name: input.name,
          description: input.description,
          variables: input.variables,
          bundle: input.bundle as Record<string, unknown>,
          created_at: now,
          updated_at: now,
        })
        .catch((error: unknown) => {
          if (isUniqueViolation(error)) throw new ConflictError('A template of the organization has this name');
          throw error;
        }),
    );
    return toTemplate(row);
  }

  async delete(auth: AuthContext, templateId: string): Promise<void> {
    assertPermission(auth, 'agents:write');
    const template = await this.templates.find(organizationsWith(auth, 'agents:write'), templateId);
    if (!template) throw new NotFoundError('Template');
    await this.audited.transaction((trx) => this.templates.with(trx).delete(template.organization_id, template.id));
  }

  /**
   * A new agent in the template's organization (agents:write there): every variable from `variables`
   * or its default (400 naming a missing one), placeholders filled in, then created as an import is.
   */
  async createAgent(auth: AuthContext, body: unknown): Promise<Agent> {
    assertPermission(auth, 'agents:write');
    if (auth.allowedAgentIds !== null)
      throw new ForbiddenError('An API key restricted to specific agents cannot create agents');
    const input = parseBody(AgentFromTemplateSchema, body);
    const template = await this.templates.find(organizationsWith(auth, 'agents:write'), input.template_id);
    if (!template) throw new NotFoundError('Template');
    const details: ErrorDetail[] = [];
    const values: Record<string, string> = {};
    const declared = new Set(template.variables.map((v) => v.name));
    for (const v of template.variables) {
      const value = input.variables[v.name] ?? v.default;
      if (value === undefined) details.push({ field: `variables.${v.name}`, message: 'Required by the template' });
      else values[v.name] = value;
    }
    for (const name of Object.keys(input.variables))
      if (!declared.has(name)) details.push({ field: `variables.${name}`, message: 'Not a variable of the template' });
    if (details.length > 0) throw new ValidationError('Request body is invalid', details);
    const filled = fill(template.bundle, values) as Record<string, unknown>;
    if (input.name !== undefined) filled.name = input.name;
    const parsed = AgentBundleInputSchema.safeParse(filled);
    if (!parsed.success)
      throw new ValidationError(
        'The template, filled in, is not a valid bundle',
        zodIssuesToDetails(parsed.error.issues, ['bundle']),
      );
    const { agent } = await this.bundles.create(
      auth,
      template.organization_id,
      parsed.data,
      input.secrets ?? {},
      input.phone_number,
    );
    return agent;
  }

  private organization(auth: AuthContext, value: string | undefined): string {
    const several = 'Required when the caller can create agents in several organizations';
    return targetOrganization(auth, value, 'agents:write', several);
  }
}
