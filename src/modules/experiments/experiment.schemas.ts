import { paginationShape } from '../../api/pagination.js';
import { uuidField } from '../../api/validate.js';
import { z } from '../../openapi/zod.js';
import { text } from '../../validation/text.js';

export const EXPERIMENT_STATUSES = ['draft', 'running', 'stopped', 'ended'] as const;
export const END_REASONS = ['stopped', 'ends_at', 'max_calls'] as const;
export const STICKY_BY = ['call', 'caller_number'] as const;

const VariantInputSchema = z
  .strictObject({
    name: text({ min: 1, max: 50, trim: true }),
    version_id: uuidField().optional().openapi({ description: 'A stored configuration version of the agent' }),
    current: z
      .literal(true)
      .optional()
      .openapi({ description: "true: the agent's configuration as it is when the call arrives" }),
    weight: z.number().int('Must be an integer').min(1, 'Must be at least 1').max(99, 'Must be at most 99'),
  })
  .refine((v) => (v.version_id === undefined) !== (v.current === undefined), {
    message: 'Give either version_id or current: true',
    path: ['version_id'],
  });

export const CreateExperimentSchema = z
  .strictObject({
    name: text({ min: 1, max: 200, trim: true }),
    variants: z
      .array(VariantInputSchema)
      .min(2, 'An experiment has 2 to 4 variants')
      .max(4, 'An experiment has 2 to 4 variants')
      .superRefine((variants, ctx) => {
        const sum = variants.reduce((s, v) => s + v.weight, 0);
        if (sum !== 100) ctx.addIssue({ code: 'custom', message: `Weights must sum to 100 (they sum to ${sum})` });
        const names = variants.map((v) => v.name.toLowerCase());
        names.forEach((n, i) => {
          if (names.indexOf(n) !== i)
            ctx.addIssue({ code: 'custom', message: 'Variant names must differ', path: [i, 'name'] });
        });
      }),
    sticky_by: z.enum(STICKY_BY).default('call').openapi({
      description:
        'call: each call is assigned anew; caller_number: a caller keeps the variant (unknown callers: by call)',
    }),
    ends_at: z.iso.datetime({ offset: true, message: 'Must be an ISO 8601 date-time' }).nullable().optional(),
    max_calls: z.number().int('Must be an integer').min(1, 'Must be at least 1').nullable().optional(),
  })
  .openapi('ExperimentCreate');

export type ExperimentInput = z.output<typeof CreateExperimentSchema>;

export const ListExperimentsQuery = z.object({ ...paginationShape });

export const ExperimentVariantSchema = z
  .object({
    name: z.string(),
    version_id: z.uuid().nullable().openapi({ description: "null: the agent's current configuration" }),
    version: z.number().int().nullable(),
    current: z.boolean(),
    weight: z.number().int(),
  })
  .openapi('ExperimentVariant');

export type ExperimentVariant = z.output<typeof ExperimentVariantSchema>;

export const ExperimentSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    name: z.string(),
    status: z.enum(EXPERIMENT_STATUSES),
    end_reason: z.enum(END_REASONS).nullable(),
    sticky_by: z.enum(STICKY_BY),
    variants: z.array(ExperimentVariantSchema),
    ends_at: z.iso.datetime().nullable(),
    max_calls: z.number().int().nullable(),
    calls: z.number().int().openapi({ description: 'Routed calls assigned a variant so far' }),
    started_at: z.iso.datetime().nullable(),
    ended_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Experiment');

export type Experiment = z.output<typeof ExperimentSchema>;

const OutcomeDistributionSchema = z
  .object({
    values: z.record(z.string(), z.number().int()).openapi({
      description:
        'Calls per value, as text ("true"/"false" for a boolean field); every declared value is listed, 0 when none had it',
    }),
    missing: z.number().int().openapi({ description: 'Reported calls of the variant without a value for the field' }),
  })
  .openapi('ExperimentOutcomeDistribution');

export const ExperimentVariantResultSchema = z
  .object({
    name: z.string(),
    calls: z.number().int().openapi({ description: 'Reported calls whose call_id was routed to this variant' }),
    done: z.number().int().openapi({ description: 'Of them, calls marked done' }),
    done_rate: z.number().nullable().openapi({ description: 'done / calls; null without calls' }),
    done_rate_interval: z
      .object({ low: z.number(), high: z.number() })
      .nullable()
      .openapi({ description: 'The 95% Wilson score interval of done_rate; null without calls' }),
    done_rate_p_value: z.number().nullable().openapi({
      description:
        "Two-sided p-value of the pooled two-proportion z-test of this variant's done rate against the first variant's; null for the first variant, when either has no calls, or when every call of both is done (or none is)",
    }),
    duration_avg: z
      .number()
      .nullable()
      .openapi({ description: 'Seconds, as in call statistics (total duration / calls); null without calls' }),
    outcomes: z.record(z.string(), OutcomeDistributionSchema).openapi({
      description: "One entry per enum and boolean analysis field of the agent (the agent's fields as they are now)",
    }),
  })
  .openapi('ExperimentVariantResult');

const count = (description: string) => z.number().int().openapi({ description });

export const ExperimentResultsSchema = z
  .object({
    experiment_id: z.uuid(),
    status: z.enum(EXPERIMENT_STATUSES),
    assigned_calls: count('Routed calls assigned a variant (the experiment `calls`)'),
    reported_calls: count('Of them, calls reported to the agent (trashed calls not counted)'),
    variants: z.array(ExperimentVariantResultSchema).openapi({ description: "In the experiment's order" }),
  })
  .openapi('ExperimentResults');

export type ExperimentResults = z.output<typeof ExperimentResultsSchema>;
export type ExperimentVariantResult = z.output<typeof ExperimentVariantResultSchema>;
