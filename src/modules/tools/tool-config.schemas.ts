import { z } from '../../openapi/zod.js';
import { phoneNumberField } from '../../phone/phone-number.js';
import { uuidField } from '../../api/validate.js';
import { text } from '../../validation/text.js';

export const TOOL_TYPES = [
  'http_request',
  'transfer_call',
  'monitored_transfer',
  'end_call',
  'extract_variable',
  'play_tone',
  'knowledge_base',
  'set_call_result',
  'identify_caller',
  'switch_agent',
  'verify_value',
  'list_available_slots',
  'book_appointment',
  'resolve_contact',
] as const;
export type ToolType = (typeof TOOL_TYPES)[number];

/** Tool types that forward the call to a phone number, and so may be linked to an employee. */
export const TRANSFER_TOOL_TYPES: readonly ToolType[] = ['transfer_call', 'monitored_transfer'];

const message = (max = 1000) => text({ min: 1, max, trim: true });

// RFC 9110 token for header names; values without line breaks (no header injection).
const nameValueList = (kind: 'header' | 'query') =>
  z
    .array(
      z.strictObject({
        name:
          kind === 'header'
            ? z.string().regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,256}$/, 'Must be a valid header name')
            : text({ min: 1, max: 256 }),
        value: text({ max: 4096 }).refine((v) => !/[\r\n\0]/.test(v), 'Must not contain line breaks'),
      }),
    )
    .max(50)
    .default([]);

// TalkPilot's form: a string of milliseconds ("5000"). The older number of seconds is refused.
const timeoutMs = z
  .string({ message: 'Must be a string of milliseconds, e.g. "5000"' })
  .regex(/^\d{1,6}$/, 'Must be a string of milliseconds, e.g. "5000"')
  .refine((v) => Number(v) >= 100 && Number(v) <= 30000, 'Must be between "100" and "30000" milliseconds')
  .default('5000')
  .openapi({ description: 'Milliseconds as a string, 100 to 30000', example: '5000' });

const HttpRequestConfig = z
  .strictObject({
    url: text({ max: 2048 }).openapi({
      description: 'http(s) URL; must pass the outgoing-request guard',
      example: 'https://crm.example.com/lookup',
    }),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
    headers: nameValueList('header'),
    query_params: nameValueList('query'),
    body_template: z.string().max(10000).optional(),
    timeout: timeoutMs,
    speak_during_execution: z.boolean().default(false),
    speak_after_execution: z.boolean().default(true),
    execution_message: message(500)
      .optional()
      .openapi({ description: 'Said while the request runs (speak_during_execution)' }),
  })
  .openapi('HttpRequestToolConfig');

const transferFields = {
  phone_number: phoneNumberField
    .optional()
    .openapi({ description: 'Required unless the tool is linked to an employee, whose number it then takes' }),
  play_hold_music: z.boolean().default(false),
  transfer_message: message(500).optional(),
};

const TransferCallConfig = z
  .strictObject({ ...transferFields, transfer_mode: z.enum(['cold', 'warm']).default('cold') })
  .openapi('TransferCallToolConfig');

const MonitoredTransferConfig = z
  .strictObject({
    ...transferFields,
    timeout_seconds: z
      .number()
      .int()
      .min(5)
      .max(120)
      .optional()
      .openapi({ description: "Seconds to wait for an answer; default: the agent's transfer_timeout_seconds" }),
    fallback_message: message(500).optional().openapi({ description: 'Said when nobody answers' }),
  })
  .openapi('MonitoredTransferToolConfig');

const EndCallConfig = z
  .strictObject({ goodbye_message: message().optional().openapi({ description: 'Said before hanging up' }) })
  .openapi('EndCallToolConfig');

const ExtractVariableConfig = z
  .strictObject({
    variable_name: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'Must match ^[A-Za-z][A-Za-z0-9_]{0,63}$')
      .openapi({ example: 'email' }),
    variable_type: z.enum(['email', 'phone', 'name', 'number', 'date', 'custom']).default('custom'),
    prompt_text: message(2000).optional().openapi({ description: 'What the agent asks to get the value' }),
    example_format: message(255).optional().openapi({ example: 'name@example.com' }),
    confirmation_enabled: z.boolean().default(false),
  })
  .openapi('ExtractVariableToolConfig');

const PlayToneConfig = z
  .strictObject({
    tone_type: z.enum(['dtmf']).default('dtmf'),
    dtmf_digit: z
      .string()
      .regex(/^[0-9*#A-D]{1,32}$/, 'Must be 1..32 of 0-9 * # A-D')
      .openapi({ example: '1' }),
    duration: z.number().int().min(50).max(10000).default(500).openapi({ description: 'Milliseconds' }),
    volume: z.number().min(0).max(1).default(0.8),
  })
  .openapi('PlayToneToolConfig');

const KnowledgeBaseConfig = z
  .strictObject({
    top_k: z.number().int().min(1).max(20).default(5),
    similarity_threshold: z.number().min(0).max(1).default(0.5),
    bridging_sentence: message(500).optional().openapi({ description: 'Said while the knowledge base is searched' }),
  })
  .openapi('KnowledgeBaseToolConfig');

const SetCallResultConfig = z
  .strictObject({})
  .openapi('SetCallResultToolConfig', { description: 'No configuration: send {}' });

const digits = (max: number) => z.number().int().min(1).max(max);
const IdentifyCallerConfig = z
  .strictObject({
    lookup_url: z.string().max(2048).openapi({ description: 'Looks the caller up; passes the outgoing-request guard' }),
    fetch_case_url: z.string().max(2048).openapi({ description: 'Fetches a case by its Aktenzeichen' }),
    verify_plz_url: z.string().max(2048).optional().openapi({ description: 'Checks a postcode (PLZ)' }),
    aktenzeichen: z
      .strictObject({ min_digits: digits(30).default(4), max_digits: digits(30).default(12) })
      .refine((d) => d.min_digits <= d.max_digits, { message: 'min_digits must not exceed max_digits' })
      .default({ min_digits: 4, max_digits: 12 }),
    plz: z.strictObject({ digits: digits(10).default(5) }).default({ digits: 5 }),
  })
  .openapi('IdentifyCallerToolConfig');

const SwitchAgentConfig = z
  .strictObject({
    target_agent_id: uuidField().openapi({ description: 'Another agent of the same organization' }),
    ring_count: z.number().int().min(0).max(3).default(1),
    intro_instructions: z.string().trim().max(2000).optional(),
  })
  .openapi('SwitchAgentToolConfig');

const outcomeKey = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'Must be 1..64 of letters, digits, _ and -');
const VerifyValueConfig = z
  .strictObject({
    value: z.strictObject({
      name: z.string().trim().min(1).max(100).openapi({ example: 'plz' }),
      type: z.enum(['digits', 'text']).default('text'),
    }),
    rules: z
      .array(
        z.strictObject({
          match: z.enum(['in']),
          values: z.array(z.string().max(255)).min(1).max(1000),
          outcome: outcomeKey,
        }),
      )
      .max(100)
      .default([]),
    default_outcome: outcomeKey,
    unresolved_outcome: outcomeKey.optional(),
    outcomes: z.record(outcomeKey, z.strictObject({ say: message(2000) })),
  })
  .superRefine((c, ctx) => {
    const known = new Set(Object.keys(c.outcomes));
    const check = (name: string | undefined, path: (string | number)[]) => {
      if (name !== undefined && !known.has(name))
        ctx.addIssue({ code: 'custom', path, message: `Outcome "${name}" is not a key of outcomes` });
    };
    c.rules.forEach((rule, i) => check(rule.outcome, ['rules', i, 'outcome']));
    check(c.default_outcome, ['default_outcome']);
    check(c.unresolved_outcome, ['unresolved_outcome']);
  })
  .openapi('VerifyValueToolConfig');

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;
const hoursRange = z
  .tuple([z.string().regex(HH_MM, 'Must be HH:MM'), z.string().regex(HH_MM, 'Must be HH:MM')])
  .refine(([start, end]) => start < end, 'The start must be before the end');
const dayHours = z.array(hoursRange).max(10);
const BusinessHours = z
  .strictObject({
    mon: dayHours.optional(),
    tue: dayHours.optional(),
    wed: dayHours.optional(),
    thu: dayHours.optional(),
    fri: dayHours.optional(),
    sat: dayHours.optional(),
    sun: dayHours.optional(),
  })
  .openapi('BusinessHours', {
    description: 'Per day a list of [start, end] "HH:MM" (Europe/Berlin); a missing day is closed',
    example: { mon: [['08:00', '12:00']] },
  });

const CalendarConfig = z.strictObject({
  business_hours: BusinessHours,
  duration_minutes: z.number().int().min(15).max(480).default(60),
  lead_time_hours: z.number().int().min(0).max(168).default(24),
  search_window_days: z.number().int().min(1).max(60).default(14),
  contact_mode: z.enum(['email', 'phone']).default('email'),
  email_variable: z.string().trim().min(1).max(64).default('email'),
});
const ListAvailableSlotsConfig = CalendarConfig.openapi('ListAvailableSlotsToolConfig');
const BookAppointmentConfig = CalendarConfig.openapi('BookAppointmentToolConfig');

const sentence = z.string().trim().min(5).max(500);
const ResolveContactConfig = z
  .strictObject({
    employee_name: z.string().trim().min(1).max(100).optional().openapi({ description: 'Fills {mitarbeiter}' }),
    confirm_calling_number: sentence,
    ask_mobile: sentence,
    ask_mobile_anonymous: sentence,
    ask_other_number: sentence,
    ask_email: sentence,
    no_contact: sentence,
    phone_variable: z.string().trim().min(1).max(64).default('caller_phone'),
    email_variable: z.string().trim().min(1).max(64).default('email'),
  })
  .openapi('ResolveContactToolConfig');

/** One schema per tool type; defaults are filled in, so the stored config is the effective one. */
export const TOOL_CONFIG_SCHEMAS = {
  http_request: HttpRequestConfig,
  transfer_call: TransferCallConfig,
  monitored_transfer: MonitoredTransferConfig,
  end_call: EndCallConfig,
  extract_variable: ExtractVariableConfig,
  play_tone: PlayToneConfig,
  knowledge_base: KnowledgeBaseConfig,
  set_call_result: SetCallResultConfig,
  identify_caller: IdentifyCallerConfig,
  switch_agent: SwitchAgentConfig,
  verify_value: VerifyValueConfig,
  list_available_slots: ListAvailableSlotsConfig,
  book_appointment: BookAppointmentConfig,
  resolve_contact: ResolveContactConfig,
} satisfies Record<ToolType, z.ZodType>;

export type ToolConfig = Record<string, unknown>;
