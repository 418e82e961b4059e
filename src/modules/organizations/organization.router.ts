import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { writeConditions } from '../../http/entity-tag.js';
import { uuidParams } from '../../api/validate.js';
import type { OrganizationService } from './organization.service.js';

const orgIdParams = uuidParams('orgId');

export function organizationRouter(organizations: OrganizationService): Router {
  const router = Router();
  const route = routesOf(router);
  route.get('/').json((auth) => organizations.list(auth));
  route.patch('/').resource((auth, _, req) => organizations.updateImplicit(auth, req.body, writeConditions(req)));
  route.get('/:orgId', orgIdParams).resource((auth, { orgId }) => organizations.get(auth, orgId));
  route
    .patch('/:orgId', orgIdParams)
    .resource((auth, { orgId }, req) => organizations.update(auth, orgId, req.body, writeConditions(req)));
  return router;
}
