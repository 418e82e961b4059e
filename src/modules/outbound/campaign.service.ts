import type { AgentRef, AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { NotFoundError, ValidationError, type ErrorDetail } from '../../errors/index.js';
import { zodIssuesToDetails } from '../../errors/zod.js';
import type { CursorPage } from '../../api/pagination.js';
import { parse, parseBody } from '../../api/validate.js';
import { text } from '../../validation/text.js';
import type { AgentAccess } from '../agents/agent-access.js';
import {
  toCampaign,
  type Campaign,
  type CampaignRow,
  type JobFields,
  type OutboundRepository,
} from './outbound.repository.js';
import {
  AppendRecipientsSchema,
  CreateCampaignSchema,
  ListCampaignsQuery,
  RecipientSchema,
  RECIPIENTS_MAX,
  type RecipientInput,
} from './outbound.schemas.js';
import { asWindowAgent, firstMoment, recordConsents } from './outbound.service.js';

const CSV_COLUMNS = [
  'to_number',
  'external_id',
  'contact_id',
  'consent_basis',
  'consent_obtained_at',
  'consent_source',
];

/** One CSV line split on commas, with double-quoted fields ("" inside quotes is a quote). */
function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',' || ch === ';') {
      fields.push(field);
      field = '';
    } else field += ch;
  }
  fields.push(field);
  return fields.map((f) => f.trim());
}

/**
 * `text/csv` recipients: a header line naming columns among to_number, external_id, contact_id,
 * consent_basis, consent_obtained_at, consent_source; any other column becomes a variable.
 */
export function recipientsFromCsv(csv: string): unknown[] {
  const lines = csv.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length === 0) return [];
  const header = splitCsvLine(lines[0]!.replace(/^\uFEFF/, ''));
  if (!header.includes('to_number'))
    throw new ValidationError('Request body is invalid', [
      { field: 'body', message: 'The CSV header must name a to_number column' },
    ]);
  return lines.slice(1).map((line) => {
    const values = splitCsvLine(line);
    const row: Record<string, unknown> = {};
    const variables: Record<string, string> = {};
    const consent: Record<string, string> = {};
    header.forEach((column, i) => {
      const value = values[i] ?? '';
      if (value === '') return;
      if (column.startsWith('consent_')) consent[column.slice('consent_'.length)] = value;
      else if (CSV_COLUMNS.includes(column)) row[column] = value;
      else variables[column] = value;
    });
    if (Object.keys(variables).length > 0) row.variables = variables;
    if (Object.keys(consent).length > 0) row.consent = consent;
    return row;
  });
}

/** Campaigns: many jobs of one agent sharing a window, limits and default variables. */
export class CampaignService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly repo: OutboundRepository,
    private readonly access: AgentAccess,
    private readonly clock: Clock,
  ) {}

  async create(auth: AuthContext, agentId: string, body: unknown): Promise<Campaign> {
    const agent = await this.access.resolve(auth, agentId, 'outbound:write');
    const input = parseBody(CreateCampaignSchema, body);
    const now = this.clock.now();
    const campaign: Omit<CampaignRow, 'id'> = {
      organization_id: agent.organization_id,
      agent_id: agent.id,
      name: input.name,
      status: 'active',
      purpose: input.purpose,
      window: input.window,
      respect_opening_hours: input.respect_opening_hours,
      max_concurrent: input.max_concurrent,
      max_attempts: input.max_attempts,
      retry_after_minutes: input.retry_after_minutes,
      variables: input.variables,
      not_before: input.not_before ? new Date(input.not_before) : null,
      not_after: input.not_after ? new Date(input.not_after) : null,
      finished_at: null,
      created_at: now,
      updated_at: now,
    };
    const recipients = await this.checkRecipients(agent, campaign, input.recipients);
    const row = await this.audited.transaction(async (trx) => {
      const repo = this.repo.with(trx);
      const created = await repo.insertCampaign(campaign);
      await this.insertRecipients(repo, agent, created, recipients.fresh, now);
      return created;
    });
    return this.represent(row);
  }

  async list(auth: AuthContext, agentId: string, query: unknown): Promise<CursorPage<Campaign>> {
    const agent = await this.access.resolve(auth, agentId, 'outbound:read');
    const { cursor, limit } = parse(ListCampaignsQuery, query, 'Invalid query parameters');
    const { rows, pagination } = await this.repo.listCampaigns(agent, { cursor, limit });
    const progress = await this.repo.campaignProgress(rows.map((r) => r.id));
    return { data: rows.map((r) => toCampaign(r, progress.get(r.id))), pagination };
  }

  async get(auth: AuthContext, agentId: string, campaignId: string): Promise<Campaign> {
    const agent = await this.access.resolve(auth, agentId, 'outbound:read');
    return this.represent(await this.found(agent, campaignId));
  }

  /** Appends recipients (JSON `{recipients: [...]}` or the rows of a `text/csv` body), same rules as at creation. */
  async append(
    auth: AuthContext,
    agentId: string,
    campaignId: string,
    body: unknown,
  ): Promise<{ added: number; skipped: number; campaign: Campaign }> {
    const agent = await this.access.resolve(auth, agentId, 'outbound:write');
    const campaign = await this.found(agent, campaignId);
    const list =
      typeof body === 'string'
        ? recipientsFromCsv(parse(text({ max: 20_000_000 }), body, 'Request body is invalid'))
        : parseBody(AppendRecipientsSchema, body).recipients;
    if (list.length > RECIPIENTS_MAX)
      throw new ValidationError('Request body is invalid', [
        { field: 'recipients', message: `At most ${RECIPIENTS_MAX} recipients per request` },
      ]);
    if (campaign.status === 'cancelled')
      throw new ValidationError('Request body is invalid', [
        { field: 'recipients', message: 'The campaign is cancelled' },
      ]);
    const recipients = await this.checkRecipients(agent, campaign, list);
    const now = this.clock.now();
    await this.audited.transaction(async (trx) => {
      const repo = this.repo.with(trx);
      const locked = await repo.lockCampaign(agent, campaignId);
      if (!locked) throw new NotFoundError('Campaign');
      await this.insertRecipients(repo, agent, locked, recipients.fresh, now);
      await repo.updateCampaign(agent, campaignId, { updated_at: now });
    });
    return {
      added: recipients.fresh.length,
      skipped: recipients.skipped,
      campaign: await this.represent(await this.found(agent, campaignId)),
    };
  }

  pause(auth: AuthContext, agentId: string, campaignId: string) {
    return this.transition(auth, agentId, campaignId, ['active'], 'paused');
  }

  resume(auth: AuthContext, agentId: string, campaignId: string) {
    return this.transition(auth, agentId, campaignId, ['paused'], 'active');
  }

  /** Cancels the campaign and every job of it not yet final. Idempotent. */
  cancel(auth: AuthContext, agentId: string, campaignId: string) {
    return this.transition(auth, agentId, campaignId, ['active', 'paused'], 'cancelled');
  }

  /** pause/resume/cancel: a campaign already in the target state is answered as it is. */
  private async transition(
    auth: AuthContext,
    agentId: string,
    campaignId: string,
    from: CampaignRow['status'][],
    to: CampaignRow['status'],
  ): Promise<Campaign> {
    const agent = await this.access.resolve(auth, agentId, 'outbound:write');
    await this.found(agent, campaignId);
    const row = await this.audited.transaction(async (trx) => {
      const repo = this.repo.with(trx);
      const current = await repo.lockCampaign(agent, campaignId);
      if (!current) throw new NotFoundError('Campaign');
      if (current.status === to) return current;
      if (!from.includes(current.status))
        throw new ValidationError('The campaign cannot change to this state', [
          { field: 'status', message: `The campaign is ${current.status}` },
        ]);
      const now = this.clock.now();
      if (to === 'cancelled') await repo.cancelCampaignJobs(campaignId, agent.organization_id, now);
      return repo.updateCampaign(agent, campaignId, { status: to, updated_at: now });
    });
    return this.represent(row);
  }

  /**
   * Every recipient checked; one 400 naming each bad row's field (`recipients[i].<field>`) and
   * nothing stored. Recipients whose external_id has a job of the agent already are skipped.
   */
  private async checkRecipients(
    agent: AgentRef,
    campaign: Omit<CampaignRow, 'id'>,
    list: unknown[],
  ): Promise<{ fresh: (RecipientInput & { index: number })[]; skipped: number }> {
    const details: ErrorDetail[] = [];
    const parsed: (RecipientInput & { index: number })[] = [];
    const seen = new Map<string, number>();
    list.forEach((item, index) => {
      const result = RecipientSchema.safeParse(item);
      if (!result.success) {
        details.push(...zodIssuesToDetails(result.error.issues, ['recipients', index]));
        return;
      }
      const r = result.data;
      if (campaign.purpose === 'marketing' && !r.consent)
        details.push({
          field: `recipients[${index}].consent`,
          message: 'Required when purpose is marketing (UWG §7: prior express consent)',
        });
      if (r.external_id) {
        const first = seen.get(r.external_id);
        if (first !== undefined)
          details.push({ field: `recipients[${index}].external_id`, message: `Repeats recipients[${first}]` });
        else seen.set(r.external_id, index);
      }
      parsed.push({ ...r, index });
    });
    const contactIds = parsed.map((r) => r.contact_id).filter((id): id is string => !!id);
    const contacts = await this.repo.contactExists(agent, contactIds);
    for (const r of parsed)
      if (r.contact_id && !contacts.has(r.contact_id))
        details.push({ field: `recipients[${r.index}].contact_id`, message: 'No contact of this agent has this id' });
    if (details.length > 0) {
      details.sort((a, b) => recipientIndex(a.field) - recipientIndex(b.field));
      throw new ValidationError('Request body is invalid', details);
    }
    const existing = await this.repo.existingExternalIds(
      agent,
      parsed.map((r) => r.external_id).filter((id): id is string => !!id),
    );
    const fresh = parsed.filter((r) => !r.external_id || !existing.has(r.external_id));
    return { fresh, skipped: parsed.length - fresh.length };
  }

  /** Jobs for the recipients: numbers on the do-not-call list are stored as `blocked`. */
  private async insertRecipients(
    repo: OutboundRepository,
    agent: AgentRef & Parameters<typeof asWindowAgent>[0],
    campaign: CampaignRow,
    recipients: (RecipientInput & { index: number })[],
    now: Date,
  ): Promise<void> {
    if (recipients.length === 0) return;
    const listed = await repo.listedNumbers(
      agent.organization_id,
      recipients.map((r) => r.to_number),
    );
    const template: JobFields = {
      organization_id: agent.organization_id,
      agent_id: agent.id,
      campaign_id: campaign.id,
      to_number: '',
      contact_id: null,
      purpose: campaign.purpose,
      status: 'scheduled',
      window: campaign.window,
      respect_opening_hours: campaign.respect_opening_hours,
      not_before: campaign.not_before,
      not_after: campaign.not_after,
      max_attempts: campaign.max_attempts,
      retry_after_minutes: campaign.retry_after_minutes,
      variables: {},
      external_id: null,
      consent: null,
      next_attempt_at: null,
      failure_reason: null,
      finished_at: null,
      created_at: now,
      updated_at: now,
    };
    // Every job of the campaign shares its window: the first allowed moment is computed once.
    const planned = firstMoment(asWindowAgent(agent), template, now.getTime());
    const jobs = recipients.map((r): JobFields => ({
      ...template,
      ...(listed.has(r.to_number) ? { status: 'blocked', finished_at: now, next_attempt_at: null } : planned),
      to_number: r.to_number,
      contact_id: r.contact_id ?? null,
      variables: { ...campaign.variables, ...(r.variables ?? {}) },
      external_id: r.external_id ?? null,
      consent: r.consent ?? null,
    }));
    const rows = await repo.insertJobs(jobs);
    await recordConsents(repo, rows, now);
  }

  private async found(agent: AgentRef, campaignId: string): Promise<CampaignRow> {
    const row = await this.repo.findCampaign(agent, campaignId);
    if (!row) throw new NotFoundError('Campaign');
    return row;
  }

  private async represent(row: CampaignRow): Promise<Campaign> {
    const progress = await this.repo.campaignProgress([row.id]);
    return toCampaign(row, progress.get(row.id));
  }
}

function recipientIndex(field: string): number {
  const match = /^recipients\[(\d+)\]/.exec(field);
  return match ? Number(match[1]) : -1;
}
