import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../http/validate.js';
import type { OrganizationService } from './organization.service.js';

const orgIdParams = uuidParams('orgId');

export function organizationRouter(organizations: OrganizationService): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    res.json(await organizations.list(authOf(req)));
  });
  router.patch('/', async (req, res) => {
    res.json(await organizations.updateImplicit(authOf(req), req.body));
  });
  router.patch('/:orgId', async (req, res) => {
    const { orgId } = parse(orgIdParams, req.params);
    res.json(await organizations.update(authOf(req), orgId, req.body));
  });
  return router;
}
