import { paginationShape } from '../../api/pagination.js';
import { uuidField } from '../../api/validate.js';
import { paginationQueryDocShape } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { text } from '../../validation/text.js';

const instant = z.iso.datetime({ offset: true, message: 'Must be an ISO 8601 date-time with offset' });

export const auditLogQuery = z.strictObject({
  ...paginationShape,
  agent_id: uuidField().optional(),
  actor: text({ min: 1, max: 255 }).optional(),
  action: text({ min: 1, max: 255 }).optional(),
  from: instant.optional(),
  to: instant.optional(),
});

export const AuditLogQuerySchema = z.object({
  ...paginationQueryDocShape,
  agent_id: z.uuid().optional().openapi({ description: 'Only entries about this agent' }),
  actor: z.string().optional().openapi({ description: 'A user id or an API key prefix' }),
  action: z
    .string()
    .optional()
    .openapi({ description: 'Exact action, e.g. `agents.tools.create`', example: 'agents.update' }),
  from: z.string().optional().openapi({ description: 'Entries at or after this instant (ISO 8601)' }),
  to: z.string().optional().openapi({ description: 'Entries before this instant (ISO 8601)' }),
});

export const AuditEntrySchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    agent_id: z.uuid().nullable(),
    action: z.string().openapi({ example: 'agents.tools.update' }),
    method: z.enum(['POST', 'PUT', 'PATCH', 'DELETE']),
    route: z.string().openapi({ example: '/v1/agents/{agentId}/tools/{toolId}' }),
    resource_type: z.string().openapi({ example: 'tools' }),
    resource_id: z.string().nullable(),
    actor: z.object({
      type: z.enum(['user', 'api_key']),
      user_id: z.uuid().nullable(),
      key_prefix: z.string().nullable(),
    }),
    request_id: z.string(),
    details: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: 'What an action adds, e.g. the counts of `data_subject.erased`; null for most' }),
    created_at: z.iso.datetime(),
  })
  .openapi('AuditEntry');

export type AuditEntryResponse = z.infer<typeof AuditEntrySchema>;
