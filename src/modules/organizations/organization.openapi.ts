import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { access, anyAuth, errorResponses, json, jsonBody } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { OrganizationPatchSchema, OrganizationSchema } from './organization.schemas.js';

export function registerOrganizationPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/v1/organization',
    operationId: 'listOrganizations',
    ...access('organization:read'),
    tags: ['Organization'],
    summary: 'Organizations the caller reaches (organization:read); not paginated',
    security: anyAuth,
    responses: {
      200: json(z.object({ data: z.array(OrganizationSchema) }), 'The organizations'),
      ...errorResponses(401, 403, 429),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/organization/{orgId}',
    operationId: 'getOrganization',
    ...access('organization:read'),
    tags: ['Organization'],
    summary: 'One organization the caller reaches (organization:read)',
    security: anyAuth,
    request: { params: z.object({ orgId: z.uuid() }) },
    responses: {
      200: json(OrganizationSchema, 'The organization'),
      ...errorResponses(400, 401, 403, 404, 429),
    },
  });
  registry.registerPath({
    method: 'patch',
    path: '/v1/organization/{orgId}',
    operationId: 'updateOrganization',
    ...access('organization:write'),
    tags: ['Organization'],
    summary:
      'Update organization settings (organization:write): auto_delete_done_calls, cascade_done_same_number, calendar_status_update, forward_call_email, transfer_popup_enabled, notdienst_bereiche, require_if_match, call_retention_days; unknown fields are ignored',
    security: anyAuth,
    request: { params: z.object({ orgId: z.uuid() }), body: jsonBody(OrganizationPatchSchema) },
    responses: {
      200: json(OrganizationSchema, 'The updated organization'),
      ...errorResponses(400, 401, 403, 404, 413, 429),
    },
  });
  registry.registerPath({
    method: 'patch',
    path: '/v1/organization',
    operationId: 'updateOwnOrganization',
    ...access('organization:write'),
    tags: ['Organization'],
    summary:
      "Older form without an id (organization:write): changes the only organization the caller may change, or an API key's home organization; 400 when several are possible",
    security: anyAuth,
    request: { body: jsonBody(OrganizationPatchSchema) },
    responses: {
      200: json(OrganizationSchema, 'The updated organization'),
      ...errorResponses(400, 401, 403, 404, 413, 429),
    },
  });
}
