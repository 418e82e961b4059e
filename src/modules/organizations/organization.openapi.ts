import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody } from '../../openapi/common.js';
import { operationGroup, resourceOperations } from '../../openapi/operations.js';
import { OrganizationPatchSchema, OrganizationSchema } from './organization.schemas.js';

export function registerOrganizationPaths(registry: OpenAPIRegistry): void {
  const register = operationGroup(registry, { tags: ['Organization'], agentScope: 'none', errors: [401, 403, 429] });
  const organizations = resourceOperations(register, {
    path: '/v1/organization',
    permission: 'organization',
    operation: 'Organization',
    param: 'orgId',
    schema: OrganizationSchema,
  });
  organizations.list({ summary: 'Organizations the caller reaches (organization:read); not paginated' });
  organizations.get({ summary: 'One organization the caller reaches (organization:read)', errors: [400, 404] });
  organizations.update({
    summary:
      'Update organization settings (organization:write): auto_delete_done_calls, cascade_done_same_number, calendar_status_update, forward_call_email, transfer_popup_enabled, notdienst_bereiche, require_if_match, call_retention_days; unknown fields are ignored',
    body: OrganizationPatchSchema,
    errors: [400, 404, 413],
  });
  register({
    method: 'patch',
    path: '/v1/organization',
    operationId: 'updateOwnOrganization',
    permission: 'organization:write',
    summary:
      "Older form without an id (organization:write): changes the only organization the caller may change, or an API key's home organization; 400 when several are possible",
    request: { body: jsonBody(OrganizationPatchSchema) },
    responses: {
      200: json(OrganizationSchema, 'The updated organization'),
    },
    errors: [400, 404, 413],
  });
}
