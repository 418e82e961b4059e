import type { ErrorDetail } from '../../errors/index.js';
import { AGENT_URL_EVENT_TYPES } from '../../events/event-recorder.js';
import { zodIssuesToDetails } from '../../errors/zod.js';
import { outgoingUrlProblem } from '../../outgoing/url-policy.js';
import { z } from '../../openapi/zod.js';
import {
  BACKGROUND_AUDIO_TYPES,
  BUNDESLAENDER,
  FORMALITIES,
  LANGUAGES,
  LLM_PROVIDERS,
  STT_PROVIDERS,
  TTS_PROVIDERS,
} from './agent.schemas.js';
import { parseTime } from './schedule.js';
import { text } from '../../validation/text.js';
import { exceptionProblems, isRealDate, SCHEDULE_EXCEPTIONS_MAX } from './schedule-exceptions.js';
import { isValidTimeZone } from './zoned-time.js';
import { uuidField } from '../../api/validate.js';
import { PII_KINDS } from '../../privacy/pii-redaction.js';
import { analysisFieldsInput } from './analysis-fields.js';

/** Fields a client may see but never write through PATCH (docs/decisions.md). */
export const READ_ONLY_AGENT_FIELDS = [
  'id',
  'organization_id',
  'phone_number',
  'retention_days',
  'metadata',
  'created_at',
  'updated_at',
  'workflow',
] as const;

/** On create, `organization_id` and `phone_number` are set once; the rest stays read-only. */
export const CREATE_READ_ONLY_AGENT_FIELDS = READ_ONLY_AGENT_FIELDS.filter(
  (f) => f !== 'organization_id' && f !== 'phone_number',
);

export const PROMPT_MAX_CHARS = 50_000;
export const GREETING_MAX_CHARS = 2000;
export const STT_KEYWORDS_MAX = 100;
export const SCHEDULE_RULES_MAX = 100;

const GREETING_WINDOW_TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
export const E164 = /^\+[1-9]\d{1,14}$/;

const isObject = (p: { value: unknown }) => typeof p.value === 'object' && p.value !== null && !Array.isArray(p.value);

const windowTime = z.string().regex(GREETING_WINDOW_TIME, 'Must be HH:MM between 00:00 and 23:59');

/** Spec rules 1, 5 and the from/to pairing; each problem at its own path. */
export const GreetingVariantInputSchema = z
  .strictObject({
    greeting: text({ min: 1, max: GREETING_MAX_CHARS }),
    tag: text({ min: 1, max: 100, trim: true }).optional(),
    from: windowTime.optional(),
    to: windowTime.optional(),
    min_calls_today: z.number().int('Must be an integer').min(1, 'Must be at least 1').optional(),
  })
  .superRefine(
    (variant, ctx) => {
      const has = (key: string) => (variant as Record<string, unknown>)[key] !== undefined;
      if (has('from') && !has('to'))
        ctx.addIssue({ code: 'custom', path: ['to'], message: 'Required when from is set' });
      if (has('to') && !has('from'))
        ctx.addIssue({ code: 'custom', path: ['from'], message: 'Required when to is set' });
      if (!has('tag') && !has('from') && !has('to') && !has('min_calls_today')) {
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: 'A variant needs a condition: tag, from and to, or min_calls_today',
        });
      }
    },
    { when: isObject },
  )
  .openapi('GreetingVariantInput');

const startTime = z.string().refine((v) => parseTime(v) !== undefined, 'Must be a time HH:mm between 00:00 and 23:59');
const endTime = z
  .string()
  .refine((v) => parseTime(v, true) !== undefined, 'Must be a time HH:mm between 00:00 and 24:00');

const scheduleDays = z
  .array(
    z
      .number()
      .int('Must be an integer')
      .min(0, 'Must be 0 (Sunday) to 6 (Saturday)')
      .max(6, 'Must be 0 (Sunday) to 6 (Saturday)'),
  )
  .min(1, 'Must name at least one day')
  .superRefine((days, ctx) => {
    days.forEach((day, i) => {
      if (days.indexOf(day) !== i) ctx.addIssue({ code: 'custom', path: [i], message: `Day ${day} is listed twice` });
    });
  });

const localDate = z.string().refine(isRealDate, 'Must be a real date YYYY-MM-DD');

/** One dated exception: `date` or `from`+`to`, and `closed: true` or its own `rules` (hours of those days). */
export const ScheduleExceptionInputSchema = z
  .strictObject({
    date: localDate.optional(),
    from: localDate.optional(),
    to: localDate.optional(),
    closed: z.literal(true, { message: 'Must be true (leave it out and give rules for special hours)' }).optional(),
    rules: z
      .array(z.strictObject({ start_time: startTime, end_time: endTime }))
      .min(1, 'Must have at least 1 rule')
      .max(SCHEDULE_RULES_MAX, `Must have at most ${SCHEDULE_RULES_MAX} rules`)
      .optional(),
    note: text({ max: 200 }).optional(),
  })
  .superRefine((e, ctx) => {
    const ranged = e.from !== undefined || e.to !== undefined;
    if (e.date !== undefined && ranged)
      ctx.addIssue({ code: 'custom', path: ['date'], message: 'Give either date, or from and to' });
    else if (e.date === undefined && !ranged)
      ctx.addIssue({ code: 'custom', path: ['date'], message: 'Required (or from and to)' });
    else if (ranged && (e.from === undefined || e.to === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [e.from === undefined ? 'from' : 'to'],
        message: 'from and to go together',
      });
    if ((e.closed === true) === (e.rules !== undefined))
      ctx.addIssue({ code: 'custom', path: ['rules'], message: 'Give either closed: true or rules' });
  })
  .openapi('ScheduleExceptionInput');

/** A real IANA zone, days 0..6 unique, real times; end <= start runs past midnight (docs/decisions.md). */
export const AgentScheduleInputSchema = z
  .strictObject({
    timezone: z.string().refine(isValidTimeZone, 'Must be an IANA time zone such as Europe/Berlin'),
    rules: z
      .array(z.strictObject({ days: scheduleDays, start_time: startTime, end_time: endTime }))
      .max(SCHEDULE_RULES_MAX, `Must have at most ${SCHEDULE_RULES_MAX} rules`),
    exceptions: z
      .array(ScheduleExceptionInputSchema)
      .max(SCHEDULE_EXCEPTIONS_MAX, `Must have at most ${SCHEDULE_EXCEPTIONS_MAX} exceptions`)
      .superRefine((exceptions, ctx) => {
        for (const p of exceptionProblems(exceptions))
          ctx.addIssue({ code: 'custom', path: [p.index], message: p.message });
      })
      .optional()
      .openapi({
        description:
          'Dated exceptions (closures, special hours), checked before public holidays and weekly rules; at most 366, no two covering the same day',
      }),
  })
  .openapi('AgentScheduleInput');

function webhookUrl(allowPrivate: boolean) {
  return text({ max: 2048 }).superRefine((value, ctx) => {
    const problem = outgoingUrlProblem(value, { allowPrivate });
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** A set of event types, each at most once (an empty list turns the URL's events off). */
function eventSelection<T extends readonly [string, ...string[]]>(types: T) {
  return z
    .array(z.enum(types, { message: `Must be one of: ${types.join(', ')}` }))
    .max(types.length)
    .superRefine((list, ctx) => {
      list.forEach((type, i) => {
        if (list.indexOf(type) !== i) ctx.addIssue({ code: 'custom', path: [i], message: `${type} is listed twice` });
      });
    });
}

const nullableEnum = <T extends readonly [string, ...string[]]>(values: T) => z.enum(values).nullable();
const between = (min: number, max: number) =>
  z.number().min(min, `Must be between ${min} and ${max}`).max(max, `Must be between ${min} and ${max}`);

/** Every field PATCH may write, with the spec's constraints (the writable set: docs/decisions.md). */
export function agentWritableShape(options: { allowPrivateWebhookTargets: boolean }) {
  return {
    name: text({ min: 1, max: 255, trim: true }),
    is_active: z.boolean(),
    language: nullableEnum(LANGUAGES),
    formality: nullableEnum(FORMALITIES),
    llm_provider: nullableEnum(LLM_PROVIDERS),
    llm_model: text({ min: 1, max: 255 }).nullable(),
    llm_temperature: between(0, 2).nullable(),
    tts_provider: nullableEnum(TTS_PROVIDERS),
    voice_id: text({ min: 1, max: 255 }).nullable(),
    realtime_voice: text({ min: 1, max: 255 }).nullable(),
    speaking_rate: between(0.5, 2).nullable(),
    stt_provider: nullableEnum(STT_PROVIDERS),
    stt_keywords: z
      .array(text({ min: 1, max: 200 }))
      .max(STT_KEYWORDS_MAX, `Must have at most ${STT_KEYWORDS_MAX} items`)
      .nullable(),
    prompt: text({ max: PROMPT_MAX_CHARS }),
    greeting: text({ max: GREETING_MAX_CHARS }).nullable(),
    greeting_variants: z.array(GreetingVariantInputSchema).nullable(),
    post_call_webhook_url: webhookUrl(options.allowPrivateWebhookTargets).nullable(),
    post_call_webhook_events: eventSelection(AGENT_URL_EVENT_TYPES).openapi({
      description: 'Event types sent to post_call_webhook_url (default: call.completed)',
      example: ['call.completed', 'agent.updated'],
    }),
    post_call_webhook_retries: z.boolean().openapi({
      description:
        'Retry a failed delivery to post_call_webhook_url after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (the Standard Webhooks schedule) with the same webhook-id; default false: one attempt, no retry',
    }),
    schedule: AgentScheduleInputSchema.nullable(),
    backup_agent_id: uuidField().nullable(),
    bundesland: z.enum(BUNDESLAENDER),
    allow_greeting_interruption: z.boolean().nullable(),
    short_calls_auto_edit: z.boolean(),
    track_caller_name: z.boolean(),
    transfer_timeout_seconds: z
      .number()
      .int('Must be an integer')
      .min(5, 'Must be between 5 and 45')
      .max(45, 'Must be between 5 and 45')
      .nullable(),
    background_audio_enabled: z.boolean(),
    background_audio_type: z.enum(BACKGROUND_AUDIO_TYPES),
    background_audio_volume: between(0, 1),
    thinking_sound_enabled: z.boolean(),
    thinking_sound_volume: between(0, 1),
    aic_enhancement_enabled: z.boolean(),
    // TalkPilot's vacation mode (older pages and every example file).
    vacation_mode: z.boolean(),
    vacation_end: z.iso
      .datetime({ offset: true, message: 'Must be an ISO 8601 date-time, e.g. 2026-04-01T00:00:00Z' })
      .nullable()
      .openapi({ description: 'Vacation mode ends by itself at this moment; null = until switched off' }),
    vacation_notdienst: z.boolean().openapi({ description: 'Emergency calls still reach the agent during vacation' }),
    require_passing_test_cases: z.boolean().openapi({
      description:
        "Refuse (409 TEST_CASES_FAILED) any write that would make one of the agent's test cases fail: to its configuration, sub-resources and contacts, or to its backup agent",
    }),
    redact_pii: eventSelection(PII_KINDS).openapi({
      description:
        'Personal data call intake replaces in transcript, summary, request, caller name, note and string outcomes before storing or sending (a call PATCH redacts note and outcomes alike): phone -> [PHONE], email -> [EMAIL], iban -> [IBAN], card -> [CARD], birthdate -> [BIRTHDATE] (default: none)',
      example: ['phone', 'iban'],
    }),
    analysis_fields: analysisFieldsInput,
  };
}

export function agentPatchSchema(options: { allowPrivateWebhookTargets: boolean }) {
  // parseStrict refuses unknown and read-only fields; the document says so.
  return z.object(agentWritableShape(options)).partial().openapi('AgentPatch', { additionalProperties: false });
}

/** Spaces, dashes, dots and brackets are stripped before the E.164 check. */
const phoneNumber = z
  .string()
  .transform((v) => v.replace(/[\s\-().]/g, ''))
  .pipe(z.string().regex(E164, 'Must be an E.164 phone number such as +4930123456'));

export function agentCreateSchema(options: { allowPrivateWebhookTargets: boolean }) {
  const writable = z.object(agentWritableShape(options)).partial();
  return writable
    .extend({
      name: writable.shape.name.unwrap(),
      phone_number: phoneNumber.openapi({ type: 'string', example: '+4930123456' }),
      organization_id: uuidField().optional(),
    })
    .openapi('AgentCreate', { additionalProperties: false });
}

export type AgentPatch = z.output<ReturnType<typeof agentPatchSchema>>;
export type AgentCreate = z.output<ReturnType<typeof agentCreateSchema>>;

/**
 * Strict parsing for agent bodies: every unknown and every read-only key is one detail, and the
 * known fields are checked all the same, so one response lists every problem.
 */
export function parseStrict<S extends z.ZodObject>(
  schema: S,
  body: unknown,
  readOnly: readonly string[],
): { data: z.output<S> | undefined; details: ErrorDetail[] } {
  const raw = (body ?? {}) as Record<string, unknown>;
  const details: ErrorDetail[] = [];
  for (const key of Object.keys(raw)) {
    if (readOnly.includes(key)) details.push({ field: key, message: 'Field is read-only' });
    else if (!Object.hasOwn(schema.shape, key)) details.push({ field: key, message: 'Unknown field' });
  }
  const known = Object.fromEntries(Object.entries(raw).filter(([key]) => Object.hasOwn(schema.shape, key)));
  const result = schema.safeParse(known);
  if (!result.success) details.push(...zodIssuesToDetails(result.error.issues));
  return { data: result.success ? result.data : undefined, details };
}
