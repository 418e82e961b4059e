import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { anyAuth, errorResponses, json } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { OrganizationSchema } from './organization.schemas.js';

export function registerOrganizationPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/v1/organization',
    tags: ['Organization'],
    summary: 'Organizations the caller reaches (organization:read); not paginated',
    security: anyAuth,
    responses: {
      200: json(z.object({ data: z.array(OrganizationSchema) }), 'The organizations'),
      ...errorResponses(401, 403, 429),
    },
  });
}
