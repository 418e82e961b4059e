import type { Knex } from 'knex';
import { assertEveryAgent, assertPermission, organizationsWith, type AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../../errors/index.js';
import type { EventRecorder } from '../../events/event-recorder.js';
import type { CursorPage } from '../../api/pagination.js';
import { parse, parseBody, uuidParams } from '../../api/validate.js';
import { normalizePhoneNumber } from '../../phone/phone-number.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { Schedule } from '../agents/schedule.js';
import { blockedReason, nextAllowed, previewMoments, windowRules, type WindowAgent } from './calling-window.js';
import {
  answeredChange,
  CLAIMABLE_NONE,
  JOB_EXTERNAL_ID_UNIQUE,
  readFinished,
  toAttempt,
  toDoNotCall,
  toOutboundCall,
  type AttemptRow,
  type DueJob,
  type JobFields,
  type JobRow,
  type LockedJob,
  type OutboundCall,
  type OutboundRepository,
} from './outbound.repository.js';
import {
  ClaimSchema,
  CreateDoNotCallSchema,
  CreateOutboundCallSchema,
  DeleteDoNotCallQuery,
  MIN_LEASE_SECONDS,
  ListDoNotCallQuery,
  ListOutboundCallsQuery,
  PreviewSchema,
  ResultSchema,
  type Outcome,
} from './outbound.schemas.js';

/** Consent records are kept five years from the last call (UWG §7a). */
export const CONSENT_RETENTION_YEARS = 5;
/** When a due job is not allowed at its moment after all (an open-ended vacation), look again this much later. */
const RECHECK_MS = 15 * 60_000;
const MINUTE = 60_000;
const attemptParams = uuidParams('attemptId');
/** Bound of OutboundService's leasesHeld: the sets of organizations of the dialers' keys. */
const LEASES_HELD_KEPT = 10_000;

export type OutboundSettings = { maxConcurrentPerAgent: number };

export class DoNotCallError extends AppError {
  constructor(phoneNumber: string) {
    super('DO_NOT_CALL', 409, `${phoneNumber} is on the organization's do-not-call list`, [
      { field: 'to_number', message: 'On the do-not-call list' },
    ]);
  }
}

export function keepUntil(from: Date): Date {
  const d = new Date(from);
  d.setUTCFullYear(d.getUTCFullYear() + CONSENT_RETENTION_YEARS);
  return d;
}

export function asWindowAgent(agent: {
  schedule: unknown;
  bundesland: string;
  vacation_mode: boolean | null;
  vacation_end: Date | string | null;
}): WindowAgent {
  return {
    schedule: (agent.schedule as Schedule | null) ?? null,
    bundesland: agent.bundesland,
    vacation_mode: agent.vacation_mode === true,
    vacation_end: agent.vacation_end,
  };
}

/** next_attempt_at of a new job (or status failed when its window never opens before not_after). */
export function firstMoment(agent: WindowAgent, job: JobFields, from: number): Partial<JobFields> {
  const rules = windowRules(agent, job);
  const next = nextAllowed(rules, Math.max(from, rules.notBefore ?? from));
  if (next !== null) return { next_attempt_at: new Date(next) };
  return {
    status: 'failed',
    failure_reason: rules.notAfter !== null ? 'deadline' : 'no_window',
    finished_at: new Date(from),
  };
}

/** Consent records as documented at creation: kept five years, from the last call to the number once one is placed (see claim). */
export async function recordConsents(repo: OutboundRepository, jobs: JobRow[], now: Date): Promise<void> {
  await repo.insertConsents(
    jobs
      .filter((j) => j.consent !== null)
      .map((j) => ({
        organization_id: j.organization_id,
        agent_id: j.agent_id,
        job_id: j.id,
        phone_number: j.to_number,
        basis: j.consent!.basis,
        obtained_at: j.consent!.obtained_at,
        source: j.consent!.source,
        keep_until: keepUntil(now),
        created_at: now,
      })),
  );
}

type ClaimedJob = {
  job_id: string;
  attempt_id: string;
  agent_id: string;
  campaign_id: string | null;
  to_number: string;
  from_number: string;
  purpose: JobRow['purpose'];
  variables: Record<string, unknown>;
  attempt_number: number;
  lease_expires_at: string;
};

/**
 * Outbound call jobs: created by the business (outbound:write), handed out to the dialer and
 * reported back (outbound:dispatch). This service decides what may be called, when and how often;
 * it never dials.
 */
export class OutboundService {
  /**
   * Per dialer's organizations: from when until when none of their open leases can run out (the
   * first one's end, at most MIN_LEASE_SECONDS after the look; a clock set back looks again).
   */
  private readonly leasesHeld = new Map<string, { from: number; until: number }>();

  constructor(
    private readonly audited: AuditedTransactions,
    private readonly repo: OutboundRepository,
    private readonly access: AgentAccess,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
    private readonly settings: OutboundSettings,
  ) {}

  /** 201 with the new job, or 200 with the existing one when `external_id` was sent before. */
  async create(auth: AuthContext, agentId: string, body: unknown): Promise<{ created: boolean; job: OutboundCall }> {
    const agent = await this.access.resolve(auth, agentId, 'outbound:write');
    const input = parseBody(CreateOutboundCallSchema, body);
    if (input.external_id !== undefined) {
      const existing = await this.repo.findByExternalId(agent, input.external_id);
      if (existing) return { created: false, job: await this.represent(agent.organization_id, existing) };
    }
    if (input.contact_id && !(await this.repo.contactExists(agent, [input.contact_id])).has(input.contact_id))
      throw new ValidationError('Request body is invalid', [
        { field: 'contact_id', message: 'No contact of this agent has this id' },
      ]);
    if ((await this.repo.listedNumbers(agent.organization_id, [input.to_number])).size > 0)
      throw new DoNotCallError(input.to_number);
    const now = this.clock.now();
    const fields: JobFields = {
      organization_id: agent.organization_id,
      agent_id: agent.id,
      campaign_id: null,
      to_number: input.to_number,
      contact_id: input.contact_id ?? null,
      purpose: input.purpose,
      status: 'scheduled',
      window: input.window,
      respect_opening_hours: input.respect_opening_hours,
      not_before: input.not_before ? new Date(input.not_before) : null,
      not_after: input.not_after ? new Date(input.not_after) : null,
      max_attempts: input.max_attempts,
      retry_after_minutes: input.retry_after_minutes,
      variables: input.variables,
      external_id: input.external_id ?? null,
      consent: input.consent ?? null,
      next_attempt_at: null,
      failure_reason: null,
      finished_at: null,
      created_at: now,
      updated_at: now,
    };
    Object.assign(fields, firstMoment(asWindowAgent(agent), fields, now.getTime()));
    try {
      const row = await this.audited.transaction(async (trx) => {
        const repo = this.repo.with(trx);
        const [row] = await repo.insertJobs([fields]);
        await recordConsents(repo, [row!], now);
        return row!;
      });
      return { created: true, job: toOutboundCall(row, []) };
    } catch (error) {
      // Two requests with the same external_id at once: the second answers with the first's job.
      if (input.external_id !== undefined && isUniqueViolation(error, JOB_EXTERNAL_ID_UNIQUE)) {
        const existing = await this.repo.findByExternalId(agent, input.external_id);
        if (existing) return { created: false, job: await this.represent(agent.organization_id, existing) };
      }
      throw error;
    }
  }

  async list(auth: AuthContext, agentId: string, query: unknown): Promise<CursorPage<OutboundCall>> {
    const agent = await this.access.resolve(auth, agentId, 'outbound:read');
    const { cursor, limit, ...filters } = parse(ListOutboundCallsQuery, query, 'Invalid query parameters');
    const { rows, pagination } = await this.repo.listJobs(agent, filters, { cursor, limit });
    const attempts = await this.repo.attemptsOf(
      agent.organization_id,
      rows.map((r) => r.id),
    );
    return { data: rows.map((r) => toOutboundCall(r, attempts.get(r.id) ?? [])), pagination };
  }

  async get(auth: AuthContext, agentId: string, jobId: string): Promise<OutboundCall> {
    const agent = await this.access.resolve(auth, agentId, 'outbound:read');
    const row = await this.repo.findJob(agent, jobId);
    if (!row) throw new NotFoundError('Outbound call');
    return this.represent(agent.organization_id, row);
  }

  /** Cancels a job not yet final; a final job is answered as it is (idempotent). */
  async cancel(auth: AuthContext, agentId: string, jobId: string): Promise<OutboundCall> {
    const agent = await this.access.resolve(auth, agentId, 'outbound:write');
    if (!(await this.repo.findJob(agent, jobId))) throw new NotFoundError('Outbound call');
    const row = await this.audited.transaction(async (trx) => {
      const repo = this.repo.with(trx);
      const job = await repo.lockJob(agent.organization_id, jobId);
      if (!job || job.agent_id !== agent.id) throw new NotFoundError('Outbound call');
      if (job.status !== 'scheduled' && job.status !== 'in_progress') return job;
      const now = this.clock.now();
      return repo.updateJob(agent.organization_id, jobId, {
        status: 'cancelled',
        next_attempt_at: null,
        finished_at: now,
        updated_at: now,
      });
    });
    return this.represent(agent.organization_id, row);
  }

  /** The next five allowed periods for a window, from not_before (or now). */
  async preview(auth: AuthContext, agentId: string, body: unknown) {
    const agent = await this.access.resolve(auth, agentId, 'outbound:read');
    const input = parseBody(PreviewSchema, body);
    const rules = windowRules(asWindowAgent(agent), {
      window: input.window,
      respect_opening_hours: input.respect_opening_hours,
      not_before: input.not_before ?? null,
      not_after: input.not_after ?? null,
    });
    const from = Math.max(this.clock.now().getTime(), rules.notBefore ?? 0);
    return { timezone: rules.timezone, moments: previewMoments(rules, from, 5) };
  }

  // Dispatch

  /**
   * Hands out up to `max` due jobs, each with a new attempt and a lease. Leases that ran out are
   * settled first (the attempt counts as failed). A job is checked again against its window, the
   * do-not-call list and its deadline at this moment; `max_concurrent` of its campaign and the
   * per-agent limit hold, counted under a per-agent lock.
   *
   * Usually two statements without a transaction (one when nothing is due): the due jobs with room
   * are read, checked here, and started by one statement that takes the agents' locks and counts
   * under them (`npm run bench -- outbound`). When one of them is not to be called now (outside its
   * window, listed), the claim runs as a transaction that settles it (claimChecked).
   */
  async claim(auth: AuthContext, body: unknown): Promise<{ data: ClaimedJob[] }> {
    assertPermission(auth, 'outbound:dispatch');
    assertEveryAgent(auth);
    const organizations = organizationsWith(auth, 'outbound:dispatch');
    const { max, lease_seconds: leaseSeconds } = parseBody(ClaimSchema, body);
    await this.expireLeases(organizations);
    const now = this.clock.now();
    const perAgent = this.settings.maxConcurrentPerAgent;
    const claimable = await this.audited.statement(
      (db, audit) => this.repo.claimable(organizations, now, { peek: max * 4, max, perAgent }, audit),
      { when: CLAIMABLE_NONE, wrote: (jobs) => jobs.length === 0 },
    );
    if (claimable.length === 0) return { data: [] };
    if (
      !claimable.every(
        (job) => !job.listed && blockedReason(windowRules(this.dueAgent(job), job), now.getTime()) === null,
      )
    )
      return this.claimChecked(organizations, max, leaseSeconds);
    const leaseExpiresAt = new Date(now.getTime() + leaseSeconds * 1000);
    const attempts = await this.audited.statement((db, audit) =>
      this.repo.take(
        organizations,
        claimable,
        { now, leaseExpiresAt, keepUntil: keepUntil(now), max, perAgent },
        audit,
      ),
    );
    const attemptOf = new Map(attempts.map((a) => [a.job_id, a]));
    return {
      data: claimable
        .filter((job) => attemptOf.has(job.id))
        .map((job) => this.claimed(job, attemptOf.get(job.id)!, leaseExpiresAt)),
    };
  }

  /**
   * claim as one transaction, for due jobs of which some are not to be called now: those are
   * rescheduled, failed or blocked, and the others handed out.
   */
  private claimChecked(organizations: string[], max: number, leaseSeconds: number): Promise<{ data: ClaimedJob[] }> {
    // The claim's audit row is written by the statement that takes the agents' locks: claims of one
    // agent take turns, and what runs under the locks is only the statements below and the commit.
    return this.audited.transactionWithRow(async (trx, audit) => {
      const repo = this.repo.with(trx);
      const now = this.clock.now();
      // The agents' dispatch locks are taken with the read, before any job is locked: a claimer
      // waiting for them holds no job rows.
      const peek = await repo.peekAndLockAgents(organizations, now, max * 4, audit);
      if (peek.length === 0) return { data: [] };
      // Only peeked jobs whose agent and campaign have room are locked (none when every one is at
      // its limit); a job that became due since the peek waits for the next claim.
      const due = await repo.dueJobs(
        organizations,
        [...new Set(peek.map((j) => j.agent_id))],
        peek.map((j) => j.id),
        now,
        this.settings.maxConcurrentPerAgent,
      );
      const running = { agents: new Map<string, number>(), campaigns: new Map<string, number>() };
      for (const job of due) {
        running.agents.set(job.agent_id, job.agent_running);
        if (job.campaign_id) running.campaigns.set(job.campaign_id, job.campaign_running);
      }
      const picked: DueJob[] = [];
      for (const job of due) {
        if (picked.length >= max) break;
        if (job.listed) {
          await repo.updateJob(job.organization_id, job.id, this.finalChanges('blocked', null, now));
          continue;
        }
        const rules = windowRules(this.dueAgent(job), job);
        const reason = blockedReason(rules, now.getTime());
        if (reason !== null) {
          const changes = this.reschedule(
            job,
            rules,
            reason === 'vacation' ? now.getTime() + RECHECK_MS : now.getTime(),
            now,
          );
          await repo.updateJob(job.organization_id, job.id, changes);
          if (changes.status === 'failed') await this.finished(trx, job, changes);
          continue;
        }
        if (!this.hasRoom(job, running)) continue;
        running.agents.set(job.agent_id, (running.agents.get(job.agent_id) ?? 0) + 1);
        if (job.campaign_id) running.campaigns.set(job.campaign_id, (running.campaigns.get(job.campaign_id) ?? 0) + 1);
        picked.push(job);
      }
      const leaseExpiresAt = new Date(now.getTime() + leaseSeconds * 1000);
      // Attempts, the jobs in progress and (a call to a number keeps every consent record of that
      // number five years from now) the consents, in one statement.
      const attempts = await repo.startAttempts(picked, now, leaseExpiresAt, keepUntil(now));
      const attemptOf = new Map(attempts.map((a) => [a.job_id, a]));
      return {
        data: picked.map((job) =>
          this.claimed(job, { id: attemptOf.get(job.id)!.id, number: job.attempt_count + 1 }, leaseExpiresAt),
        ),
      };
    });
  }

  private claimed(job: DueJob, attempt: { id: string; number: number }, leaseExpiresAt: Date): ClaimedJob {
    return {
      job_id: job.id,
      attempt_id: attempt.id,
      agent_id: job.agent_id,
      campaign_id: job.campaign_id,
      to_number: job.to_number,
      from_number: job.agent_phone_number,
      purpose: job.purpose,
      variables: job.variables,
      attempt_number: attempt.number,
      lease_expires_at: leaseExpiresAt.toISOString(),
    };
  }

  /**
   * The dialer's result of one attempt. Reporting the same outcome again answers the same
   * (idempotent); another outcome for a finished attempt, or a result after its lease ran out
   * (it already counted as failed), is 409.
   */
  async result(auth: AuthContext, attemptIdParam: string, body: unknown) {
    assertPermission(auth, 'outbound:dispatch');
    assertEveryAgent(auth);
    const organizations = organizationsWith(auth, 'outbound:dispatch');
    // The path's id is parsed after the permission check: a caller without it learns nothing from a 400.
    const { attemptId } = parse(attemptParams, { attemptId: attemptIdParam }, 'Invalid path parameters');
    // The usual case, a valid result for an open attempt within its lease: answered, it is one
    // statement without a transaction; the other outcomes need the job's window.
    const valid = ResultSchema.safeParse(body ?? {});
    if (valid.success) {
      const { outcome, call_id: callId = null } = valid.data;
      const open =
        outcome === 'answered'
          ? await this.answered(organizations, attemptId, callId)
          : await this.retried(organizations, attemptId, outcome, callId);
      if (open) return open;
    }
    // Only this attempt's lease is looked at here (other leases are settled by the claims): a
    // result is one short transaction.
    const answer = await this.audited.transaction(async (trx) => {
      const repo = this.repo.with(trx);
      const now = this.clock.now();
      const attempt = await repo.lockAttempt(organizations, attemptId);
      // An attempt of another organization is 404 before its body is looked at.
      if (!attempt) throw new NotFoundError('Attempt');
      const input = parseBody(ResultSchema, body);
      const callId = input.call_id ?? null;
      if (attempt.outcome === null && new Date(attempt.lease_expires_at).getTime() <= now.getTime()) {
        // Its lease ran out before this result: it counts as failed, settled here and committed before the 409.
        await this.expire(trx, repo, attempt, now);
        return null;
      }
      if (attempt.outcome !== null) {
        const job = await repo.lockJob(attempt.organization_id, attempt.job_id);
        if (
          attempt.outcome === input.outcome &&
          !attempt.lease_expired &&
          (callId === null || callId === attempt.call_id)
        )
          return { attempt: toAttempt(attempt), job: await this.represent(attempt.organization_id, job!, repo) };
        if (attempt.lease_expired) return null;
        throw new ConflictError(`This attempt already has the result ${attempt.outcome}`, [
          { field: 'outcome', message: 'The attempt is finished' },
        ]);
      }
      const finished = await repo.finishAttempt(attempt.id, {
        outcome: input.outcome,
        call_id: callId,
        lease_expired: false,
        finished_at: now,
      });
      const { job, call } = await this.settle(trx, repo, finished, input.outcome, now);
      return { attempt: toAttempt(finished), job: call ?? (await this.represent(attempt.organization_id, job, repo)) };
    });
    if (answer === null)
      throw new ConflictError('The lease of this attempt ran out before its result: it counted as failed', [
        { field: 'outcome', message: 'The attempt is finished' },
      ]);
    return answer;
  }

  /**
   * `answered` for an attempt still open within its lease (else undefined, and nothing written): the
   * attempt finished, the job completed while it is in progress, its `outbound_call.completed` with
   * its dispatch job and the audit row, in one statement.
   */
  private async answered(organizations: string[], attemptId: string, callId: string | null) {
    const change = answeredChange(organizations, attemptId, { call_id: callId, finished_at: this.clock.now() });
    const open = await this.audited.statement(
      async (db, audit) => readFinished(await this.events.recordFrom(db, 'outbound_answered', change, audit)),
      { when: change.applied, wrote: (finished) => finished !== undefined },
    );
    if (!open) return undefined;
    // A job no longer in progress (cancelled while its call ran) is left as it is.
    const job = open.completed ?? (await this.repo.findJobOf(open.attempt.organization_id, open.attempt.job_id))!;
    return { attempt: toAttempt(open.attempt), job: toOutboundCall(job, [...open.earlier, open.attempt]) };
  }

  /**
   * An outcome other than `answered` for an attempt still open within its lease (else undefined,
   * and nothing written): a short transaction of two statements, the attempt finished with its job
   * locked and the audit row, then the job scheduled again or failed.
   */
  private async retried(organizations: string[], attemptId: string, outcome: Outcome, callId: string | null) {
    return this.audited.transactionWithRow(
      async (trx, audit) => {
        const repo = this.repo.with(trx);
        const now = this.clock.now();
        const open = await repo.finishOpenAttempt(
          organizations,
          attemptId,
          { outcome, call_id: callId, finished_at: now },
          audit,
        );
        if (!open) return undefined;
        const attempts = [...open.earlier, open.attempt];
        const agent = this.dueAgent(open.job);
        const { job, call } = await this.settleLocked(trx, repo, open.job, outcome, now, attempts, agent);
        return { attempt: toAttempt(open.attempt), job: call ?? toOutboundCall(job, attempts) };
      },
      { when: 'EXISTS (SELECT 1 FROM a)', wrote: (answer) => answer !== undefined },
    );
  }

  // Do-not-call list (organization)

  async listDoNotCall(auth: AuthContext, orgId: string, query: unknown) {
    this.assertOrganization(auth, orgId, 'outbound:read');
    const { cursor, limit, phone_number: phone } = parse(ListDoNotCallQuery, query, 'Invalid query parameters');
    const number = phone === undefined ? undefined : (normalizePhoneNumber(phone) ?? phone);
    const { rows, pagination } = await this.repo.listDoNotCall(orgId, number, { cursor, limit });
    return { data: rows.map(toDoNotCall), pagination };
  }

  /** Lists a number (201; 200 when it was listed already) and blocks its jobs not yet handed out. */
  async addDoNotCall(auth: AuthContext, orgId: string, body: unknown) {
    this.assertOrganization(auth, orgId, 'outbound:write');
    const input = parseBody(CreateDoNotCallSchema, body);
    return this.audited.transaction(async (trx) => {
      const { row, created } = await this.addNumber(trx, orgId, input.phone_number, input.reason ?? null, 'api');
      return { created, entry: toDoNotCall(row) };
    });
  }

  async removeDoNotCall(auth: AuthContext, orgId: string, query: unknown): Promise<void> {
    this.assertOrganization(auth, orgId, 'outbound:write');
    const { phone_number: phone } = parse(DeleteDoNotCallQuery, query, 'Invalid query parameters');
    const number = normalizePhoneNumber(phone);
    if (number === null)
      throw new ValidationError('Invalid query parameters', [{ field: 'phone_number', message: 'Not a phone number' }]);
    if (!(await this.repo.deleteDoNotCall(orgId, number))) throw new NotFoundError('Do-not-call entry');
  }

  /**
   * For the call intake (`opt_out: true`): lists the caller's number in the organization's
   * do-not-call list inside the intake's transaction.
   */
  readonly optOut = async (trx: Knex.Transaction, organizationId: string, phoneNumber: string): Promise<void> => {
    await this.addNumber(trx, organizationId, phoneNumber, 'Objected during a call', 'call_opt_out');
  };

  private async addNumber(
    trx: Knex.Transaction,
    organizationId: string,
    phoneNumber: string,
    reason: string | null,
    source: 'api' | 'call_opt_out',
  ) {
    const repo = this.repo.with(trx);
    const now = this.clock.now();
    const result = await repo.addDoNotCall({
      organization_id: organizationId,
      phone_number: phoneNumber,
      reason,
      source,
      created_at: now,
    });
    await repo.blockOpenJobs(organizationId, phoneNumber, now);
    return result;
  }

  private assertOrganization(auth: AuthContext, orgId: string, permission: 'outbound:read' | 'outbound:write'): void {
    if (!auth.organizations.has(orgId)) throw new NotFoundError('Organization');
    assertPermission(auth, permission, orgId);
  }

  // Rules shared by creation, claims and results

  private reschedule(job: JobRow, rules: ReturnType<typeof windowRules>, from: number, now: Date): Partial<JobRow> {
    const next = nextAllowed(rules, from);
    if (next === null) return this.finalChanges('failed', rules.notAfter !== null ? 'deadline' : 'no_window', now);
    return { status: 'scheduled', next_attempt_at: new Date(next), updated_at: now };
  }

  private finalChanges(status: 'completed' | 'failed' | 'blocked', reason: string | null, now: Date): Partial<JobRow> {
    return { status, failure_reason: reason, next_attempt_at: null, finished_at: now, updated_at: now };
  }

  /** Settles every open attempt whose lease ran out: it counts as failed. */
  private async expireLeases(organizations: string[]): Promise<void> {
    // Leases rarely run out: a claim looks (one statement) before it opens a transaction for them,
    // and not again while no lease can have run out since (a dialer claims many times a second).
    const key = organizations.join(',');
    const now = this.clock.now().getTime();
    const held = this.leasesHeld.get(key);
    if (held && held.from <= now && now < held.until) return;
    const first = (await this.repo.firstLeaseEnd(organizations))?.getTime() ?? Infinity;
    if (first > now) {
      // A lease handed out from now on runs at least MIN_LEASE_SECONDS.
      if (this.leasesHeld.size >= LEASES_HELD_KEPT) this.leasesHeld.clear();
      this.leasesHeld.set(key, { from: now, until: Math.min(first, now + MIN_LEASE_SECONDS * 1000) });
      return;
    }
    this.leasesHeld.delete(key);
    for (;;) {
      const settled = await this.audited.transaction(async (trx) => {
        const repo = this.repo.with(trx);
        const now = this.clock.now();
        const expired = await repo.expiredAttempts(organizations, now, 100);
        for (const attempt of expired) await this.expire(trx, repo, attempt, now);
        return expired.length;
      });
      if (settled < 100) return;
    }
  }

  /** An open attempt whose lease ran out: it counts as failed. */
  private async expire(trx: Knex.Transaction, repo: OutboundRepository, attempt: AttemptRow, now: Date) {
    const finished = await repo.finishAttempt(attempt.id, {
      outcome: 'failed',
      call_id: null,
      lease_expired: true,
      finished_at: now,
    });
    await this.settle(trx, repo, finished, 'failed', now);
  }

  /** The job after an attempt's outcome: completed, scheduled again, or failed after max_attempts. */
  private async settle(
    trx: Knex.Transaction,
    repo: OutboundRepository,
    attempt: AttemptRow,
    outcome: Outcome,
    now: Date,
  ): Promise<{ job: JobRow; call?: OutboundCall }> {
    const job = (await repo.lockJob(attempt.organization_id, attempt.job_id))!;
    return this.settleLocked(trx, repo, job, outcome, now);
  }

  /** settle for a job already locked; its `attempts` when the caller has them (else read when needed). */
  private async settleLocked(
    trx: Knex.Transaction,
    repo: OutboundRepository,
    job: JobRow,
    outcome: Outcome,
    now: Date,
    attempts?: AttemptRow[],
    agent?: WindowAgent,
  ): Promise<{ job: JobRow; call?: OutboundCall }> {
    // Cancelled (or blocked) while the call ran: the attempt is recorded, the job stays as it is.
    if (job.status !== 'in_progress') return { job };
    let changes: Partial<JobRow>;
    if (outcome === 'answered') changes = this.finalChanges('completed', null, now);
    else if (job.attempt_count >= job.max_attempts) changes = this.finalChanges('failed', 'max_attempts', now);
    else {
      const windowAgent =
        agent ?? asWindowAgent((await repo.windowAgent({ id: job.agent_id, organization_id: job.organization_id }))!);
      const rules = windowRules(windowAgent, job);
      changes = this.reschedule(job, rules, now.getTime() + job.retry_after_minutes * MINUTE, now);
    }
    const updated = await repo.updateJob(job.organization_id, job.id, changes);
    return { job: updated, call: await this.finished(trx, updated, changes, attempts) };
  }

  /**
   * A job became completed or failed: its event (a campaign's finished_at is read from its jobs).
   * Answers the job as the event shows it, so that a result need not read its attempts again.
   */
  private async finished(
    trx: Knex.Transaction,
    job: JobRow,
    changes: Partial<JobRow>,
    attempts?: AttemptRow[],
  ): Promise<OutboundCall | undefined> {
    const status = changes.status ?? job.status;
    if (status === 'completed' || status === 'failed') {
      const known = attempts ?? (await this.repo.with(trx).attemptsOf(job.organization_id, [job.id])).get(job.id);
      const call = toOutboundCall({ ...job, ...changes } as JobRow, known ?? []);
      await this.events.record(trx, {
        organization_id: job.organization_id,
        agent_id: job.agent_id,
        type: status === 'completed' ? 'outbound_call.completed' : 'outbound_call.failed',
        payload: { event: `outbound_call.${status}`, outbound_call: call },
      });
      return call;
    }
    return undefined;
  }

  /** Whether one more job of this agent and campaign may run (`max_concurrent`, the per-agent limit). */
  private hasRoom(
    job: { agent_id: string; campaign_id: string | null; campaign_max_concurrent: number | null },
    running: { agents: Map<string, number>; campaigns: Map<string, number> },
  ): boolean {
    if ((running.agents.get(job.agent_id) ?? 0) >= this.settings.maxConcurrentPerAgent) return false;
    if (job.campaign_id === null || job.campaign_max_concurrent === null) return true;
    return (running.campaigns.get(job.campaign_id) ?? 0) < job.campaign_max_concurrent;
  }

  private dueAgent(
    job: Pick<LockedJob, 'agent_schedule' | 'agent_bundesland' | 'agent_vacation_mode' | 'agent_vacation_end'>,
  ): WindowAgent {
    return asWindowAgent({
      schedule: job.agent_schedule,
      bundesland: job.agent_bundesland,
      vacation_mode: job.agent_vacation_mode,
      vacation_end: job.agent_vacation_end,
    });
  }

  private async represent(organizationId: string, row: JobRow, repo: OutboundRepository = this.repo) {
    const attempts = await repo.attemptsOf(organizationId, [row.id]);
    return toOutboundCall(row, attempts.get(row.id) ?? []);
  }
}
