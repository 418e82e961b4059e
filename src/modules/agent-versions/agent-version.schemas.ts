import { paginationShape } from '../../api/pagination.js';
import { z } from '../../openapi/zod.js';

export const listVersionsQuery = z.strictObject(paginationShape);

const versionNumber = z
  .string()
  .regex(/^\d{1,9}$/, 'Must be a version number (integer >= 1)')
  .transform(Number)
  .refine((n) => n >= 1, 'Must be a version number (integer >= 1)');

export const versionParams = z.object({ agentId: z.uuid({ message: 'Must be a UUID' }), version: versionNumber });
export const diffParams = z.object({
  agentId: z.uuid({ message: 'Must be a UUID' }),
  from: versionNumber,
  to: versionNumber,
});

const CHANGES = [
  'agent.created',
  'agent.updated',
  'workflow.replaced',
  'tool.created',
  'tool.updated',
  'tool.deleted',
  'version.restored',
] as const;

export const AgentVersionSummarySchema = z
  .object({
    agent_id: z.uuid(),
    version: z.number().int().openapi({ description: 'Sequence number per agent, from 1' }),
    change: z.enum(CHANGES).openapi({ description: 'What made this version' }),
    restored_from: z.number().int().nullable().openapi({ description: 'For `version.restored`: the version restored' }),
    actor: z.object({
      type: z.enum(['user', 'api_key']),
      user_id: z.uuid().nullable(),
      key_prefix: z.string().nullable(),
    }),
    request_id: z.string().nullable(),
    created_at: z.iso.datetime(),
  })
  .openapi('AgentVersionSummary');

export const AgentConfigurationSchema = z.record(z.string(), z.unknown()).openapi('AgentConfiguration', {
  description:
    'Every field PATCH /v1/agents/{agentId} may write, plus `workflow` (as PUT .../workflow stores it) and `tools` (each with id, name, display_name, description, tool_type, config, is_enabled, priority, employee_id; sorted by name)',
});

export const AgentVersionSchema = AgentVersionSummarySchema.extend({
  configuration: AgentConfigurationSchema,
}).openapi('AgentVersion');

export const ConfigurationChangeSchema = z
  .object({
    op: z.enum(['added', 'removed', 'changed']),
    path: z.string().openapi({ example: 'workflow.steps[2].next' }),
    old_value: z.unknown().optional(),
    new_value: z.unknown().optional(),
  })
  .openapi('ConfigurationChange');

export const AgentVersionDiffSchema = z
  .object({
    agent_id: z.uuid(),
    from: z.number().int(),
    to: z.number().int(),
    changes: z.array(ConfigurationChangeSchema).openapi({
      description: 'Sorted by path; tools are addressed by name (`tools.lookup_order.config.url`)',
    }),
  })
  .openapi('AgentVersionDiff');

export type AgentVersionSummary = z.infer<typeof AgentVersionSummarySchema>;
