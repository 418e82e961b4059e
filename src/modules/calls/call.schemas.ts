import { cursorShape, paginationShape } from '../../api/pagination.js';
import { z } from '../../openapi/zod.js';
import { timeRange } from './call.rules.js';
import type { ExtractedFilter } from './extracted-filters.js';
import { uuidField } from '../../api/validate.js';
import { text } from '../../validation/text.js';

const TranscriptEntrySchema = z.object({ role: text({ min: 1, max: 50 }), text: text({ max: 100_000 }) });
const transcriptArray = z.array(TranscriptEntrySchema).max(10_000);

/** The telephony layer may send the transcript as a list or, as in the webhook, as a JSON string of it. */
const transcript = z
  .union([
    transcriptArray,
    z
      .string()
      .transform((text, ctx) => {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'Must be a list of {role, text} or a JSON string of one' });
          return z.NEVER;
        }
      })
      .pipe(transcriptArray),
  ])
  .openapi({ description: 'List of {role, text}; a JSON string of that list is accepted too' });

const optionalText = (max: number) => text({ max }).nullable().optional();

/** Checked against the agent's analysis_fields in the service (each problem names extracted_data.<name>). */
const extractedDataInput = z
  .record(z.string(), z.unknown(), { message: 'Must be an object of analysis field values' })
  .optional()
  .openapi({
    description:
      "Typed outcomes: one value per analysis field of the agent (string, number, boolean, one of an enum's values, or a date YYYY-MM-DD); null = not known",
    example: { urgency: 'emergency', heating_issue: true },
  });

/** What a call returns: the outcomes as stored when they were written. */
export const ExtractedDataSchema = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
  .openapi('ExtractedData', { description: "Typed outcomes, keyed by the agent's analysis field names" });

export const IntakeCallSchema = z
  .object({
    call_id: text({ min: 1, max: 255 })
      .refine((id) => id.trim() !== '', 'Must not be blank')
      .openapi({ description: 'Identifier in the telephony layer; a repeated one returns the stored call' }),
    phone_number: text({ max: 50 }).nullable().optional().openapi({
      description:
        'Caller number in any written form; stored as E.164 when it is a valid number (030/1234567, 0049 30 1234567 and 49301234567 become +49301234567), else as written without spaces, dashes and brackets',
    }),
    customer_name: optionalText(500),
    customer_request: optionalText(10_000),
    duration: z.number().min(0).max(604_800).openapi({ description: 'Seconds' }),
    done: z.boolean().default(false),
    general_success: z.boolean().nullable().optional(),
    disconnection_reason: optionalText(255),
    call_summary: optionalText(20_000),
    transcript: transcript.nullable().optional(),
    audio_file_url: z
      .url({ protocol: /^https?$/, message: 'Must be an http(s) URL' })
      .max(4096)
      .nullable()
      .optional()
      .openapi({ description: 'Where the recording is stored; returned as given, never re-signed' }),
    final_score: z.number().min(1).max(10).nullable().optional().openapi({ description: 'Call quality, 1 to 10' }),
    employee_id: uuidField().nullable().optional(),
    note: optionalText(10_000),
    extracted_data: extractedDataInput,
    outbound_call_id: uuidField().optional().openapi({
      description:
        'The outbound call job (POST /v1/agents/{agentId}/outbound-calls) this call was placed for, a job of this agent: the call is stored with direction outbound',
    }),
    opt_out: z.boolean().optional().openapi({
      description:
        "The caller objected to further calls: the number goes on the organization's do-not-call list (outbound calls)",
    }),
  })
  .openapi('CallIntake');

/** Only done, note, employee_id and extracted_data are used; other fields are ignored. */
export const UpdateCallSchema = z
  .object({
    done: z.boolean().optional(),
    note: optionalText(10_000),
    employee_id: uuidField().nullable().optional(),
    extracted_data: extractedDataInput.openapi({
      description: "Replaces the call's outcomes; checked against the agent's analysis_fields as they are now",
    }),
  })
  .openapi('UpdateCall');

export const flag = z.enum(['true', 'false'], { message: 'Must be true or false' }).transform((v) => v === 'true');
export const bound = z.union([z.iso.datetime({ offset: true }), z.iso.date()], {
  message: 'Must be an ISO 8601 date or date-time',
});

/** The filters a list of calls, its export and its statistics share (the statistics require the range). */
export const callFilterShape = {
  done: flag.optional(),
  from: bound.optional(),
  to: bound.optional(),
  phone_number: text({ min: 1, max: 50 }).optional(),
  search: text({ min: 1, max: 200 }).optional(),
  include_deleted: flag.default(false),
};

/** `to` must not come before `from`: the range when both bounds are given and it holds. */
export function checkedRange(
  q: { from?: string | undefined; to?: string | undefined },
  ctx: z.RefinementCtx,
): { from: Date; before: Date } | undefined {
  const { from, before } = timeRange(q.from, q.to);
  if (!from || !before) return undefined;
  if (from.getTime() < before.getTime()) return { from, before };
  ctx.addIssue({ code: 'custom', path: ['to'], message: 'Must not be before from' });
  return undefined;
}

export const ListCallsQuery = z
  .object({ ...paginationShape, ...cursorShape, ...callFilterShape })
  .superRefine((q, ctx) => {
    checkedRange(q, ctx);
  });

export type ListCallsFilters = Omit<z.output<typeof ListCallsQuery>, 'page' | 'limit' | 'cursor'> & {
  /** `extracted.<name>` conditions, typed by the agent's analysis_fields (extracted-filters.ts). */
  extracted?: ExtractedFilter[];
};
export type IntakeCallInput = z.output<typeof IntakeCallSchema>;

export const CALL_DIRECTIONS = ['inbound', 'outbound'] as const;

/** Where a call came from: the call record, its list item and the call.completed webhook carry these. */
export const callOriginFields = {
  direction: z.enum(CALL_DIRECTIONS).openapi({
    description: 'outbound when the call was reported with outbound_call_id, else inbound',
  }),
  outbound_call_id: z.uuid().nullable().openapi({ description: 'The outbound call job the call was placed for' }),
  experiment_id: z.uuid().nullable().openapi({
    description:
      'The experiment whose variant the call ran: its call_id was routed (POST /v1/runtime/route) while an experiment of this agent ran',
  }),
  variant: z.string().nullable().openapi({ description: 'The name of that variant' }),
};

const callFields = {
  id: z.uuid(),
  call_id: z.string(),
  agent_id: z.uuid(),
  customer_name: z.string().nullable(),
  customer_request: z.string().nullable(),
  phone_number: z.string().nullable(),
  duration: z.number().openapi({ description: 'Seconds' }),
  done: z.boolean(),
  general_success: z.boolean().nullable(),
  disconnection_reason: z.string().nullable(),
  call_summary: z.string().nullable(),
  employee: z.object({ id: z.uuid(), name: z.string() }).nullable(),
  employee_id: z.uuid().nullable(),
  note: z.string().nullable(),
  is_purged: z.boolean().openapi({ description: 'Personal data removed after the retention period' }),
  deleted_at: z.iso.datetime().nullable().openapi({ description: 'Set when the call is in the trash' }),
  created_at: z.iso.datetime(),
  extracted_data: ExtractedDataSchema,
  ...callOriginFields,
  updated_at: z.iso.datetime(),
};

export const CallListItemSchema = z.object(callFields).openapi('CallListItem');

export const CallSchema = z
  .object({
    ...callFields,
    transcript: z.string().nullable().openapi({ description: 'JSON array of {role, text}, serialized into a string' }),
    audio_file_url: z.string().nullable().openapi({
      description:
        'The stored recording URL as the telephony layer reported it (not re-signed: it may have expired); null once purged',
    }),
    final_score: z.number().nullable().openapi({ description: 'Call quality score, 1 to 10' }),
  })
  .openapi('Call');
