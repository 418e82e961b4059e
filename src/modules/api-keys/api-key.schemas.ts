import { PERMISSIONS } from '../../auth/permissions.js';
import { z } from '../../openapi/zod.js';

const permissions = z
  .array(z.enum(PERMISSIONS, { message: `Unknown permission; allowed: ${PERMISSIONS.join(', ')}` }))
  .min(1, 'At least one permission is required')
  .refine((list) => new Set(list).size === list.length, 'Permissions must not repeat');

const allowedAgentIds = z
  .array(z.uuid({ message: 'Must be a UUID' }))
  .max(1000)
  .nullable()
  .openapi({ description: 'Agents the key can access; null = all agents, [] = none' });

const fields = {
  name: z.string().trim().min(1).max(100),
  permissions,
  allowed_agent_ids: allowedAgentIds,
  rate_limit_per_minute: z.number().int().min(1).max(600),
  rate_limit_per_hour: z.number().int().min(1).max(10000),
  is_active: z.boolean(),
  expires_at: z.iso.datetime({ offset: true }).nullable().openapi({ description: 'null = never expires' }),
};

export const CreateApiKeySchema = z
  .strictObject({
    name: fields.name,
    permissions: fields.permissions,
    allowed_agent_ids: fields.allowed_agent_ids.default(null),
    rate_limit_per_minute: fields.rate_limit_per_minute.default(60),
    rate_limit_per_hour: fields.rate_limit_per_hour.default(1000),
    is_active: fields.is_active.default(true),
    expires_at: fields.expires_at.default(null),
    organization_id: z
      .uuid()
      .optional()
      .openapi({ description: 'Home organization; required when the caller is developer_admin of several' }),
  })
  .openapi('CreateApiKey');

/** Unknown fields are ignored like every PATCH but the agent's (the service refuses `key` itself). */
export const UpdateApiKeySchema = z
  .object({
    name: fields.name.optional(),
    permissions: fields.permissions.optional(),
    allowed_agent_ids: fields.allowed_agent_ids.optional(),
    rate_limit_per_minute: fields.rate_limit_per_minute.optional(),
    rate_limit_per_hour: fields.rate_limit_per_hour.optional(),
    is_active: fields.is_active.optional(),
    expires_at: fields.expires_at.optional(),
  })
  .openapi('UpdateApiKey');

export const ListApiKeysQuery = z.object({ organization_id: z.uuid({ message: 'Must be a UUID' }).optional() });

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    created_by: z.uuid(),
    name: z.string(),
    key_prefix: z.string().openapi({ example: 'svc_live_3f2a' }),
    permissions: z.array(z.enum(PERMISSIONS)),
    allowed_agent_ids: z.array(z.uuid()).nullable(),
    rate_limit_per_minute: z.number().int(),
    rate_limit_per_hour: z.number().int(),
    is_active: z.boolean(),
    last_used_at: z.iso.datetime().nullable(),
    expires_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('ApiKey');

export const CreatedApiKeySchema = ApiKeySchema.extend({
  key: z.string().openapi({
    description: 'The raw key; returned only in this response',
    example: 'svc_live_0123456789abcdef0123456789abcdef',
  }),
}).openapi('CreatedApiKey');
