import { z } from '../../openapi/zod.js';
import { text } from '../../validation/text.js';

/**
 * Typed post-call outcome fields of an agent (`analysis_fields`): what a call's `extracted_data`
 * may hold. Their own file, so the agent schemas name them in one line each and the calls module
 * can validate outcomes against them without the rest of the agent input rules.
 */
export const ANALYSIS_FIELD_TYPES = ['string', 'number', 'boolean', 'enum', 'date'] as const;
export type AnalysisFieldType = (typeof ANALYSIS_FIELD_TYPES)[number];

export const ANALYSIS_FIELDS_MAX = 50;
export const ANALYSIS_ENUM_VALUES_MAX = 50;
export const ANALYSIS_FIELD_NAME = /^[a-z][a-z0-9_]{0,39}$/;

/** One field as the agent returns it; `values` only (and always) for `enum`. */
export const AnalysisFieldSchema = z
  .object({
    name: z.string().openapi({ example: 'urgency' }),
    type: z.enum(ANALYSIS_FIELD_TYPES),
    values: z
      .array(z.string())
      .optional()
      .openapi({ description: 'The allowed values of an enum field', example: ['emergency', 'routine'] }),
    required: z.boolean().optional().openapi({ description: 'Every extracted_data must carry it (default false)' }),
    description: z.string().optional(),
  })
  .openapi('AnalysisField');

export type AnalysisField = z.output<typeof AnalysisFieldSchema>;

const FieldInputSchema = z
  .strictObject({
    name: z.string().regex(ANALYSIS_FIELD_NAME, 'Must match ^[a-z][a-z0-9_]{0,39}$ (lower case, digits, _)'),
    type: z.enum(ANALYSIS_FIELD_TYPES, { message: `Must be one of: ${ANALYSIS_FIELD_TYPES.join(', ')}` }),
    values: z
      .array(text({ min: 1, max: 100 }))
      .min(1, 'Must have at least 1 value')
      .max(ANALYSIS_ENUM_VALUES_MAX, `Must have at most ${ANALYSIS_ENUM_VALUES_MAX} values`)
      .optional(),
    required: z.boolean().optional(),
    description: text({ max: 500 }).optional(),
  })
  .superRefine((field, ctx) => {
    if (field.type === 'enum' && field.values === undefined)
      ctx.addIssue({ code: 'custom', path: ['values'], message: 'Required for type enum' });
    if (field.type !== 'enum' && field.values !== undefined)
      ctx.addIssue({ code: 'custom', path: ['values'], message: 'Only for type enum' });
    field.values?.forEach((value, i) => {
      if (field.values!.indexOf(value) !== i)
        ctx.addIssue({ code: 'custom', path: ['values', i], message: `${value} is listed twice` });
    });
  });

/** The writable `analysis_fields`: at most 50, names unique. */
export const analysisFieldsInput = z
  .array(FieldInputSchema)
  .max(ANALYSIS_FIELDS_MAX, `Must have at most ${ANALYSIS_FIELDS_MAX} fields`)
  .superRefine(
    (fields, ctx) => {
      // Also when an element is invalid otherwise: every problem in one answer.
      const names = fields.map((f) =>
        typeof f === 'object' && f !== null ? (f as { name?: unknown }).name : undefined,
      );
      names.forEach((name, i) => {
        if (typeof name === 'string' && names.indexOf(name) !== i)
          ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `${name} is listed twice` });
      });
    },
    { when: (payload) => Array.isArray(payload.value) },
  )
  .openapi({
    description: 'Typed post-call outcome fields (at most 50); calls carry their values in extracted_data. Default []',
    example: [
      { name: 'urgency', type: 'enum', values: ['emergency', 'routine'], required: true },
      { name: 'heating_issue', type: 'boolean' },
    ],
  });
