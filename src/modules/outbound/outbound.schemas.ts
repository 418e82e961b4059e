import { cursorShape, keysetCursorShape, NUMBER_POSITION } from '../../api/pagination.js';
import { uuidField } from '../../api/validate.js';
import { z } from '../../openapi/zod.js';
import { cursorPaginated } from '../../openapi/common.js';
import { phoneNumberField } from '../../phone/phone-number.js';
import { text } from '../../validation/text.js';
import { parseTime } from '../agents/schedule.js';
import { DEFAULT_WINDOW } from './calling-window.js';

export const PURPOSES = ['callback', 'reminder', 'follow_up', 'marketing'] as const;
export const JOB_STATUSES = ['scheduled', 'in_progress', 'completed', 'failed', 'cancelled', 'blocked'] as const;
export const FINAL_STATUSES = ['completed', 'failed', 'cancelled', 'blocked'] as const;
export const CONSENT_BASES = ['express_consent', 'existing_customer', 'callback_request', 'business'] as const;
export const OUTCOMES = ['answered', 'no_answer', 'busy', 'voicemail', 'failed', 'rejected'] as const;
export const FAILURE_REASONS = ['deadline', 'max_attempts', 'no_window'] as const;

export type Purpose = (typeof PURPOSES)[number];
export type JobStatus = (typeof JOB_STATUSES)[number];
export type Outcome = (typeof OUTCOMES)[number];

export const VARIABLES_MAX_BYTES = 16 * 1024;

const TIME_MESSAGE = 'Must be a time HH:mm';

export const WindowSchema = z
  .strictObject({
    days: z
      .array(z.int().min(0).max(6), { message: 'Must be a list of weekdays 0 (Sunday) to 6 (Saturday)' })
      .min(1, 'At least one day')
      .max(7)
      .refine((days) => new Set(days).size === days.length, 'Days must not repeat')
      .openapi({ description: '0 = Sunday ... 6 = Saturday (Sundays are never called)', example: [1, 2, 3, 4, 5] }),
    from: z
      .string()
      .refine((v) => parseTime(v) !== undefined, TIME_MESSAGE)
      .openapi({ example: '09:00' }),
    to: z
      .string()
      .refine((v) => parseTime(v, true) !== undefined, 'Must be a time HH:mm (24:00 allowed)')
      .openapi({ example: '18:00' }),
  })
  .superRefine((w, ctx) => {
    const from = parseTime(w.from);
    const to = parseTime(w.to, true);
    if (from !== undefined && to !== undefined && to <= from)
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'Must be after from (windows do not cross midnight)' });
  })
  .openapi('CallingWindow', {
    description: "Local days and times in the agent's time zone; default Monday to Friday 09:00-18:00",
  });

export const ConsentSchema = z
  .strictObject({
    basis: z.enum(CONSENT_BASES),
    obtained_at: z.iso.datetime({ offset: true, message: 'Must be an ISO 8601 date-time' }),
    source: text({ min: 1, max: 500 }).openapi({
      description: 'Where and how it was obtained (form, recording id, ...)',
    }),
  })
  .openapi('OutboundConsent');

export const variablesField = z
  .record(z.string(), z.unknown(), { message: 'Must be an object' })
  .refine(
    (v) => Buffer.byteLength(JSON.stringify(v)) <= VARIABLES_MAX_BYTES,
    `At most ${VARIABLES_MAX_BYTES} bytes as JSON`,
  )
  .openapi({ description: "Values for the runtime's prompt (at most 16 KB as JSON)" });

const isoInstant = z.iso.datetime({ offset: true, message: 'Must be an ISO 8601 date-time' });

const consentRule = (v: { purpose?: string; consent?: unknown }, ctx: z.RefinementCtx) => {
  if (v.purpose === 'marketing' && (v.consent === undefined || v.consent === null))
    ctx.addIssue({
      code: 'custom',
      path: ['consent'],
      message: 'Required when purpose is marketing (UWG §7: prior express consent)',
    });
};

const boundsRule = (v: { not_before?: string | null; not_after?: string | null }, ctx: z.RefinementCtx) => {
  if (v.not_before && v.not_after && Date.parse(v.not_after) <= Date.parse(v.not_before))
    ctx.addIssue({ code: 'custom', path: ['not_after'], message: 'Must be after not_before' });
};

export const CreateOutboundCallSchema = z
  .strictObject({
    to_number: phoneNumberField,
    contact_id: uuidField().nullable().optional(),
    purpose: z.enum(PURPOSES),
    not_before: isoInstant.nullable().optional(),
    not_after: isoInstant.nullable().optional(),
    max_attempts: z.int().min(1).max(10).default(3),
    retry_after_minutes: z.int().min(5).max(1440).default(60),
    variables: variablesField.default({}),
    external_id: text({ min: 1, max: 255 })
      .optional()
      .openapi({ description: 'Unique per agent: sending it again returns the existing job (200)' }),
    consent: ConsentSchema.nullable().optional(),
    window: WindowSchema.default(DEFAULT_WINDOW),
    respect_opening_hours: z.boolean().default(true),
  })
  .superRefine(consentRule)
  .superRefine(boundsRule)
  .openapi('CreateOutboundCall');

export type CreateOutboundCallInput = z.output<typeof CreateOutboundCallSchema>;

export const ListOutboundCallsQuery = z.strictObject({
  ...cursorShape,
  limit: z
    .string()
    .regex(/^\d+$/, 'limit must be an integer')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 100, 'limit must be between 1 and 100')
    .default(20),
  status: z.enum(JOB_STATUSES).optional(),
  campaign_id: uuidField().optional(),
});

export const ListOutboundCallsQueryDoc = z.object({
  cursor: z.string().optional().openapi({ description: 'pagination.next_cursor of the previous page' }),
  limit: z.int().min(1).max(100).optional().openapi({ default: 20 }),
  status: z.enum(JOB_STATUSES).optional(),
  campaign_id: z.uuid().optional(),
});

export const PreviewSchema = z
  .strictObject({
    window: WindowSchema.default(DEFAULT_WINDOW),
    respect_opening_hours: z.boolean().default(true),
    not_before: isoInstant.nullable().optional(),
    not_after: isoInstant.nullable().optional(),
  })
  .superRefine(boundsRule)
  .openapi('OutboundPreviewRequest');

/** The shortest lease a claim may ask for. */
export const MIN_LEASE_SECONDS = 30;

export const ClaimSchema = z
  .strictObject({
    max: z.int().min(1).max(50).default(10),
    lease_seconds: z.int().min(MIN_LEASE_SECONDS).max(900).default(120),
  })
  .openapi('OutboundClaimRequest');

export const ResultSchema = z
  .strictObject({
    outcome: z.enum(OUTCOMES),
    call_id: text({ min: 1, max: 255 }).nullable().optional().openapi({
      description: 'The call_id the call was reported with through the call intake',
    }),
  })
  .openapi('OutboundAttemptResult');

export const CreateDoNotCallSchema = z
  .strictObject({
    phone_number: phoneNumberField,
    reason: text({ max: 500 }).nullable().optional(),
  })
  .openapi('CreateDoNotCallEntry');

export const DeleteDoNotCallQuery = z.strictObject({ phone_number: text({ min: 1, max: 50 }) });
export const DeleteDoNotCallQueryDoc = z.object({
  phone_number: z.string().openapi({ description: 'The number to remove, in any written form' }),
});
export const ListDoNotCallQuery = z.strictObject({
  // Its keyset's id part is the number.
  ...keysetCursorShape(NUMBER_POSITION),
  limit: ListOutboundCallsQuery.shape.limit,
  phone_number: text({ min: 1, max: 50 }).optional(),
});
export const ListDoNotCallQueryDoc = z.object({
  cursor: z.string().optional().openapi({ description: 'pagination.next_cursor of the previous page' }),
  limit: z.int().min(1).max(100).optional().openapi({ default: 20 }),
  phone_number: z.string().optional().openapi({ description: 'Only this number (any written form)' }),
});

// Responses

export const AttemptSchema = z
  .object({
    id: z.uuid(),
    number: z.int().openapi({ description: '1 for the first attempt' }),
    outcome: z.enum(OUTCOMES).nullable().openapi({ description: 'null while the lease is open' }),
    lease_expired: z.boolean().openapi({ description: 'No result came before the lease ran out (counted as failed)' }),
    call_id: z.string().nullable(),
    claimed_at: z.iso.datetime(),
    lease_expires_at: z.iso.datetime(),
    finished_at: z.iso.datetime().nullable(),
  })
  .openapi('OutboundAttempt');

export const OutboundCallSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    campaign_id: z.uuid().nullable(),
    to_number: z.string(),
    contact_id: z.uuid().nullable(),
    purpose: z.enum(PURPOSES),
    status: z.enum(JOB_STATUSES),
    window: WindowSchema,
    respect_opening_hours: z.boolean(),
    not_before: z.iso.datetime().nullable(),
    not_after: z.iso.datetime().nullable(),
    max_attempts: z.int(),
    retry_after_minutes: z.int(),
    variables: z.record(z.string(), z.unknown()),
    external_id: z.string().nullable(),
    consent: ConsentSchema.nullable(),
    next_attempt_at: z.iso.datetime().nullable().openapi({
      description: 'The first allowed moment of the next attempt; null when none is planned',
    }),
    failure_reason: z.enum(FAILURE_REASONS).nullable(),
    attempts: z.array(AttemptSchema),
    finished_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('OutboundCall');

export const OutboundCallPageSchema = cursorPaginated(OutboundCallSchema, 'OutboundCallPage');

export const PreviewResponseSchema = z
  .object({
    timezone: z.string(),
    moments: z.array(
      z.object({
        at: z.iso.datetime().openapi({ description: 'An allowed period starts' }),
        until: z.iso.datetime().nullable().openapi({ description: 'It ends (exclusive)' }),
        skipped: z.array(
          z.object({
            date: z.string().openapi({ example: '2026-12-25' }),
            reason: z.enum(['holiday', 'sunday', 'exception', 'vacation', 'closed']),
          }),
        ),
      }),
    ),
  })
  .openapi('OutboundPreview');

export const ClaimedJobSchema = z
  .object({
    job_id: z.uuid(),
    attempt_id: z.uuid(),
    agent_id: z.uuid(),
    campaign_id: z.uuid().nullable(),
    to_number: z.string(),
    from_number: z.string().openapi({ description: "The agent's phone number" }),
    purpose: z.enum(PURPOSES),
    variables: z.record(z.string(), z.unknown()),
    attempt_number: z.int(),
    lease_expires_at: z.iso.datetime(),
  })
  .openapi('ClaimedOutboundCall');

export const ClaimResponseSchema = z.object({ data: z.array(ClaimedJobSchema) }).openapi('OutboundClaim');

export const AttemptResultResponseSchema = z
  .object({ attempt: AttemptSchema, job: OutboundCallSchema })
  .openapi('OutboundAttemptResultResponse');

export const DoNotCallEntrySchema = z
  .object({
    phone_number: z.string(),
    reason: z.string().nullable(),
    source: z.enum(['api', 'call_opt_out']),
    created_at: z.iso.datetime(),
  })
  .openapi('DoNotCallEntry');

export const ConsentRecordSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid().nullable(),
    outbound_call_id: z.uuid().nullable().openapi({ description: 'The job that documented it' }),
    phone_number: z.string().openapi({ description: 'E.164' }),
    basis: z.enum(CONSENT_BASES),
    obtained_at: z.iso.datetime(),
    source: z.string(),
    last_call_at: z.iso.datetime().nullable().openapi({ description: 'The last call placed to the number' }),
    keep_until: z.iso.datetime().openapi({
      description:
        'Five years after the last call to the number (after its creation while none was placed); deleted by a daily job once passed',
    }),
    created_at: z.iso.datetime(),
  })
  .openapi('OutboundConsentRecord', {
    description: 'Consent to a call as documented when its job was created (UWG §7a), kept for five years',
  });

export const DoNotCallPageSchema = cursorPaginated(DoNotCallEntrySchema, 'DoNotCallPage');

// Campaigns

export const CAMPAIGN_STATUSES = ['active', 'paused', 'cancelled'] as const;
export const RECIPIENTS_MAX = 10_000;

export const RecipientSchema = z
  .strictObject({
    to_number: phoneNumberField,
    external_id: text({ min: 1, max: 255 }).nullable().optional().openapi({
      description: 'Unique per agent: a recipient whose external_id has a job already is skipped (idempotent re-send)',
    }),
    variables: variablesField.optional().openapi({ description: "Merged over the campaign's variables" }),
    consent: ConsentSchema.nullable().optional(),
    contact_id: uuidField().nullable().optional(),
  })
  .openapi('CampaignRecipient');

export type RecipientInput = z.output<typeof RecipientSchema>;

const recipients = z.array(z.unknown()).max(RECIPIENTS_MAX, `At most ${RECIPIENTS_MAX} recipients per request`);

export const CreateCampaignSchema = z
  .strictObject({
    name: text({ min: 1, max: 200, trim: true }),
    purpose: z.enum(PURPOSES),
    window: WindowSchema.default(DEFAULT_WINDOW),
    respect_opening_hours: z.boolean().default(true),
    max_concurrent: z.int().min(1).max(50).default(5),
    max_attempts: z.int().min(1).max(10).default(3),
    retry_after_minutes: z.int().min(5).max(1440).default(60),
    variables: variablesField.default({}),
    not_before: isoInstant.nullable().optional(),
    not_after: isoInstant.nullable().optional(),
    recipients: recipients.default([]).openapi({
      description: `Up to ${RECIPIENTS_MAX}; each checked like one job, every bad row named as recipients[i].<field>`,
    }),
  })
  .superRefine(boundsRule)
  .openapi('CreateCampaign');

/** As the document shows it (the recipients' items are checked one by one in the service). */
export const CreateCampaignDoc = z
  .object({
    ...CreateCampaignSchema.shape,
    recipients: z.array(RecipientSchema).max(RECIPIENTS_MAX).optional(),
  })
  .openapi('CreateCampaignRequest');

export const AppendRecipientsSchema = z.strictObject({ recipients }).openapi('AppendRecipients');
export const AppendRecipientsDoc = z
  .object({ recipients: z.array(RecipientSchema).max(RECIPIENTS_MAX) })
  .openapi('AppendRecipientsRequest');

export const ListCampaignsQuery = z.strictObject({
  ...cursorShape,
  limit: ListOutboundCallsQuery.shape.limit,
});
export const ListCampaignsQueryDoc = z.object({
  cursor: z.string().optional().openapi({ description: 'pagination.next_cursor of the previous page' }),
  limit: z.int().min(1).max(100).optional().openapi({ default: 20 }),
});

export const CampaignSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    name: z.string(),
    status: z.enum(CAMPAIGN_STATUSES),
    purpose: z.enum(PURPOSES),
    window: WindowSchema,
    respect_opening_hours: z.boolean(),
    max_concurrent: z.int(),
    max_attempts: z.int(),
    retry_after_minutes: z.int(),
    variables: z.record(z.string(), z.unknown()),
    not_before: z.iso.datetime().nullable(),
    not_after: z.iso.datetime().nullable(),
    counters: z
      .object({
        scheduled: z.int(),
        in_progress: z.int(),
        completed: z.int(),
        failed: z.int(),
        cancelled: z.int(),
        blocked: z.int(),
        total: z.int(),
      })
      .openapi({ description: 'Jobs per status' }),
    finished_at: z.iso.datetime().nullable().openapi({
      description: 'When the last job became final; null while any job is not final (or there is none)',
    }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Campaign');

export const CampaignPageSchema = cursorPaginated(CampaignSchema, 'CampaignPage');

export const AppendResultSchema = z
  .object({
    added: z.int(),
    skipped: z.int().openapi({ description: 'Recipients whose external_id has a job of this agent already' }),
    campaign: CampaignSchema,
  })
  .openapi('CampaignRecipientsAdded');
