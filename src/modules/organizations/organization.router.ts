import { Router } from 'express';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { OrganizationService } from './organization.service.js';

const orgIdParams = uuidParams('orgId');

export function organizationRouter(organizations: OrganizationService): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    res.json(await organizations.list(authOf(req)));
  });
  router.patch('/', async (req, res) => {
    sendResource(req, res, await organizations.updateImplicit(authOf(req), req.body, writeConditions(req)));
  });
  router.get('/:orgId', async (req, res) => {
    const { orgId } = parse(orgIdParams, req.params);
    sendResource(req, res, await organizations.get(authOf(req), orgId));
  });
  router.patch('/:orgId', async (req, res) => {
    const { orgId } = parse(orgIdParams, req.params);
    sendResource(req, res, await organizations.update(authOf(req), orgId, req.body, writeConditions(req)));
  });
  return router;
}
