import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { access, anyAuth, errorResponses, json, paginated } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { AuditEntrySchema, AuditLogQuerySchema } from './audit-log.schemas.js';

export function registerAuditLogPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/v1/organization/{orgId}/audit-log',
    operationId: 'listAuditLog',
    ...access('organization:read', 'filtered'),
    tags: ['Audit log'],
    summary: 'Every write through the API in the organization, newest first (organization:read)',
    description:
      'One entry per successful write: action, route pattern, resource, actor (user id or API key prefix), request id and time. Request bodies are never stored. A key restricted to certain agents sees only entries about those agents. Entries are kept AUDIT_RETENTION_DAYS (365 by default).',
    security: anyAuth,
    request: { params: z.object({ orgId: z.uuid() }), query: AuditLogQuerySchema },
    responses: {
      200: json(paginated(AuditEntrySchema), 'A page of audit entries'),
      ...errorResponses(400, 401, 403, 404, 429),
    },
  });
}
