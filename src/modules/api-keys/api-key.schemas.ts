import { canonicalIpEntry, MAX_ALLOWED_IPS } from '../../auth/ip-allow-list.js';
import { PERMISSIONS } from '../../auth/permissions.js';
import { z } from '../../openapi/zod.js';
import { uuidField } from '../../api/validate.js';
import { text } from '../../validation/text.js';

const permissions = z
  .array(z.enum(PERMISSIONS, { message: `Unknown permission; allowed: ${PERMISSIONS.join(', ')}` }))
  .min(1, 'At least one permission is required')
  .refine((list) => new Set(list).size === list.length, 'Permissions must not repeat');

const allowedAgentIds = z
  .array(uuidField())
  .max(1000)
  .nullable()
  .openapi({ description: 'Agents the key can access; null = all agents, [] = none' });

/** Each entry is checked and stored in its canonical form; a repeat (after that) is refused. */
const allowedIpEntry = z
  .string()
  .max(64)
  .superRefine((value, ctx) => {
    const result = canonicalIpEntry(value);
    if ('error' in result) ctx.addIssue({ code: 'custom', message: result.error });
  })
  .overwrite((value) => {
    const result = canonicalIpEntry(value);
    return 'entry' in result ? result.entry : value;
  });

const allowedIps = z
  .array(allowedIpEntry)
  .min(1, 'At least one entry; null allows every address')
  .max(MAX_ALLOWED_IPS, `At most ${MAX_ALLOWED_IPS} entries`)
  .superRefine((list, ctx) => {
    list.forEach((entry, i) => {
      const first = list.indexOf(entry);
      if (first < i) ctx.addIssue({ code: 'custom', path: [i], message: `Repeats allowed_ips[${first}]` });
    });
  })
  .nullable()
  .openapi({
    description:
      'Addresses and CIDR ranges (IPv4 or IPv6, 1..50) a request with this key must come from; null = any. ' +
      'Stored in canonical form. A request from elsewhere is 403 IP_NOT_ALLOWED.',
    example: ['203.0.113.0/24', '2001:db8::/32'],
  });

const fields = {
  name: text({ min: 1, max: 100, trim: true }),
  permissions,
  allowed_agent_ids: allowedAgentIds,
  allowed_ips: allowedIps,
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
    allowed_ips: fields.allowed_ips.default(null),
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
    allowed_ips: fields.allowed_ips.optional(),
    rate_limit_per_minute: fields.rate_limit_per_minute.optional(),
    rate_limit_per_hour: fields.rate_limit_per_hour.optional(),
    is_active: fields.is_active.optional(),
    expires_at: fields.expires_at.optional(),
  })
  .openapi('UpdateApiKey');

export const ListApiKeysQuery = z.object({ organization_id: uuidField().optional() });

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    created_by: z.uuid(),
    name: z.string(),
    key_prefix: z.string().openapi({ example: 'svc_live_3f2a' }),
    permissions: z.array(z.enum(PERMISSIONS)),
    allowed_agent_ids: z.array(z.uuid()).nullable(),
    allowed_ips: z
      .array(z.string())
      .nullable()
      .openapi({ description: 'Addresses and CIDR ranges requests must come from; null = any' }),
    rate_limit_per_minute: z.number().int(),
    rate_limit_per_hour: z.number().int(),
    is_active: z.boolean(),
    last_used_at: z.iso.datetime().nullable(),
    expires_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    rotated_from: z.uuid().nullable().openapi({ description: 'The key this one replaced by rotation' }),
    rotated_to: z
      .uuid()
      .nullable()
      .openapi({ description: 'The key that replaced this one by rotation (null when none, or deleted)' }),
  })
  .openapi('ApiKey');

export const ApiKeyListItemSchema = ApiKeySchema.extend({
  organization_name: z.string().openapi({ description: 'Name of the home organization' }),
  created_by_email: z.string().nullable().openapi({ description: "The creator's e-mail address" }),
  is_own: z.boolean().openapi({ description: 'Created by the calling user' }),
}).openapi('ApiKeyListItem');

export const CreatedApiKeySchema = ApiKeySchema.extend({
  key: z.string().openapi({
    description: 'The raw key; returned only in this response',
    example: 'svc_live_0123456789abcdef0123456789abcdef',
  }),
}).openapi('CreatedApiKey');

export const RotateApiKeySchema = z
  .strictObject({
    overlap_seconds: z.number().int().min(0).max(604_800).default(3600).openapi({
      description:
        'How long the old key keeps working (0..604800, default 3600); 0 refuses it at once. Never extends an earlier expiry.',
    }),
  })
  .openapi('RotateApiKey');
