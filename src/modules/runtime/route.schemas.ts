import { z } from '../../openapi/zod.js';
import { text } from '../../validation/text.js';
import { ANSWERED_VIA, SIMULATION_REASONS, SimulationSchema } from '../simulation/simulation.schemas.js';
import { PROVIDERS } from '../phone-numbers/phone-number.schemas.js';

export const RouteRequestSchema = z
  .strictObject({
    called_number: text({ min: 1, max: 50 }).openapi({
      description: 'The dialled number, in any written form (normalised to E.164 before the lookup)',
      example: '+4930123456',
    }),
    caller_number: text({ max: 50 }).nullable().optional().openapi({
      description: "The caller's number as the trunk reports it; `anonymous` or an extension count as unknown",
      example: '+491701234567',
    }),
    call_id: text({ min: 1, max: 255 })
      .refine((id) => id.trim() !== '', 'Must not be blank')
      .openapi({ description: 'The call in the telephony layer; report the call later with the same call_id' }),
    at: z.iso
      .datetime({ offset: true, message: 'Must be an ISO 8601 date-time' })
      .optional()
      .openapi({ description: 'When the call arrives (default: now)' }),
  })
  .openapi('RouteRequest');

export const ToolSnapshotSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    display_name: z.string().nullable(),
    description: z.string().nullable(),
    tool_type: z.string(),
    config: z.record(z.string(), z.unknown()),
    is_enabled: z.boolean(),
    priority: z.number().int(),
    employee_id: z.uuid().nullable(),
  })
  .openapi('ToolSnapshot');

export const RunConfigurationSchema = z
  .object({
    agent_id: z.uuid(),
    version_id: z
      .uuid()
      .nullable()
      .openapi({ description: 'The configuration version run (null: an agent with no recorded version yet)' }),
    version: z.number().int().nullable(),
    agent: z
      .record(z.string(), z.unknown())
      .openapi({ description: "The agent's configuration fields (as a version stores them)" }),
    workflow: z.unknown().openapi({ description: 'The workflow graph, null without one' }),
    tools: z.array(ToolSnapshotSchema),
    greeting: z.string().openapi({ description: 'The greeting for this caller at this moment, placeholders filled' }),
    greeting_variant_index: z.number().int().nullable(),
  })
  .openapi('RunConfiguration');

export const RouteExperimentSchema = z
  .object({ id: z.uuid(), name: z.string(), variant: z.string() })
  .openapi('RouteExperiment');

export const RouteAnswerSchema = z
  .object({
    call_id: z.string(),
    called_number: z.string(),
    caller_number: z.string().nullable().openapi({ description: 'E.164, or null when the caller is unknown' }),
    at: z.iso.datetime(),
    phone_number: z.object({
      id: z.uuid(),
      number: z.string(),
      label: z.string().nullable(),
      provider: z.enum(PROVIDERS).nullable(),
    }),
    agent_id: z.uuid().openapi({ description: 'The agent the dialled number belongs to' }),
    answered_by_agent_id: z.uuid().nullable().openapi({ description: 'Who takes the call; null: nobody' }),
    via: z.enum(ANSWERED_VIA),
    reason: z.enum(SIMULATION_REASONS),
    accepting_calls: z.boolean(),
    forwarding_target: SimulationSchema.shape.transfer_targets.element
      .nullable()
      .openapi({ description: 'The first available transfer target of the answering configuration; null without one' }),
    decision: SimulationSchema.openapi({
      description: 'The call decision of the dialled agent, exactly as POST /v1/agents/{agentId}/simulate answers it',
    }),
    configuration: RunConfigurationSchema.nullable().openapi({
      description: 'What the answering agent runs; null when nobody answers',
    }),
    experiment: RouteExperimentSchema.nullable().openapi({
      description: "The experiment variant the call was assigned (the dialled agent's running experiment), else null",
    }),
  })
  .openapi('RouteAnswer');

export type RouteAnswer = z.output<typeof RouteAnswerSchema>;
export type RunConfiguration = z.output<typeof RunConfigurationSchema>;
