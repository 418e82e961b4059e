import { z } from '../../openapi/zod.js';
import { phoneNumberField } from '../../phone/phone-number.js';
import { uuidField } from '../../http/validate.js';
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

const variableName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'Must match ^[a-z][a-z0-9_]{0,63}$');
const message = (max = 1000) => text({ min: 1, max, trim: true });
const uniqueBy = <T>(key: (item: T) => string, what: string) =>
  [(items: T[]) => new Set(items.map(key)).size === items.length, `${what} must be unique`] as const;

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}
const timezone = z.string().refine(isTimeZone, 'Must be an IANA time zone').default('Europe/Berlin');

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

const HttpRequestConfig = z
  .strictObject({
    url: text({ max: 2048 }).openapi({
      description: 'http(s) URL; must pass the outgoing-request guard',
      example: 'https://crm.example.com/lookup',
    }),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
    headers: nameValueList('header'),
    query_params: nameValueList('query'),
    body_template: text({ max: 10000 }).optional(),
    timeout: z.number().int().min(100).max(30000).default(5000).openapi({ description: 'Milliseconds' }),
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
      .max(45)
      .optional()
      .openapi({ description: "Default: the agent's transfer_timeout_seconds" }),
    fallback_message: message(500).optional().openapi({ description: 'Said when nobody answers' }),
  })
  .openapi('MonitoredTransferToolConfig');

const EndCallConfig = z.strictObject({ farewell_message: message().optional() }).openapi('EndCallToolConfig');

const ExtractVariableConfig = z
  .strictObject({
    variables: z
      .array(
        z.strictObject({
          name: variableName,
          description: message(500),
          type: z.enum(['string', 'number', 'boolean', 'date']).default('string'),
          required: z.boolean().default(false),
        }),
      )
      .min(1)
      .max(50)
      .refine(...uniqueBy((v: { name: string }) => v.name, 'Variable names')),
  })
  .openapi('ExtractVariableToolConfig');

const PlayToneConfig = z
  .strictObject({
    tone: z.enum(['beep', 'chime', 'dtmf']).default('beep'),
    dtmf_digits: z
      .string()
      .regex(/^[0-9*#A-D]{1,32}$/, 'Must be 1..32 of 0-9 * # A-D')
      .optional(),
    duration_ms: z.number().int().min(50).max(10000).default(500),
  })
  .refine((c) => c.tone !== 'dtmf' || c.dtmf_digits !== undefined, {
    message: 'Required when tone is dtmf',
    path: ['dtmf_digits'],
  })
  .openapi('PlayToneToolConfig');

const KnowledgeBaseConfig = z
  .strictObject({
    top_k: z.number().int().min(1).max(20).default(5),
    similarity_threshold: z.number().min(0).max(1).default(0.5),
    bridging_sentence: message(500).optional().openapi({ description: 'Said while the knowledge base is searched' }),
  })
  .openapi('KnowledgeBaseToolConfig');

const CALL_RESULT_FIELDS = ['customer_name', 'customer_request', 'general_success', 'call_summary', 'done'] as const;
const SetCallResultConfig = z
  .strictObject({
    fields: z
      .array(z.enum(CALL_RESULT_FIELDS))
      .min(1)
      .refine(...uniqueBy((f: string) => f, 'Fields'))
      .default([...CALL_RESULT_FIELDS]),
  })
  .openapi('SetCallResultToolConfig');

const IdentifyCallerConfig = z
  .strictObject({
    match_fields: z
      .array(z.enum(['phone_number', 'customer_number', 'name']))
      .min(1)
      .refine(...uniqueBy((f: string) => f, 'Match fields'))
      .default(['phone_number']),
    ask_for_name_if_unknown: z.boolean().default(false),
  })
  .openapi('IdentifyCallerToolConfig');

const SwitchAgentConfig = z
  .strictObject({
    target_agent_id: uuidField().openapi({ description: 'Another agent of the same organization' }),
    handover_message: message().optional(),
    carry_context: z.boolean().default(true),
  })
  .openapi('SwitchAgentToolConfig');

const CONTACT_FIELDS = [
  'customer_number',
  'email',
  'first_name',
  'last_name',
  'address',
  'company',
  'phone_number',
] as const;
const VerifyValueConfig = z
  .strictObject({
    value_name: variableName.openapi({ description: 'What the caller is asked for, e.g. customer_number' }),
    contact_field: z.enum(CONTACT_FIELDS).openapi({ description: "The caller's contact field the answer must match" }),
    max_attempts: z.number().int().min(1).max(10).default(3),
    case_sensitive: z.boolean().default(false),
  })
  .openapi('VerifyValueToolConfig');

const calendarFields = {
  calendar_id: text({ min: 1, max: 255, trim: true }),
  duration_minutes: z.number().int().min(5).max(480).default(30),
  timezone,
};

const ListAvailableSlotsConfig = z
  .strictObject({
    ...calendarFields,
    days_ahead: z.number().int().min(1).max(90).default(14),
    max_results: z.number().int().min(1).max(20).default(5),
  })
  .openapi('ListAvailableSlotsToolConfig');

const BookAppointmentConfig = z
  .strictObject({
    ...calendarFields,
    require_email: z.boolean().default(false),
    confirmation_message: message().optional(),
  })
  .openapi('BookAppointmentToolConfig');

const ResolveContactConfig = z
  .strictObject({
    create_if_missing: z.boolean().default(false),
    update_fields: z
      .array(z.enum(['salutation', ...CONTACT_FIELDS]))
      .refine(...uniqueBy((f: string) => f, 'Update fields'))
      .default([]),
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
