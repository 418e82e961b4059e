import { Router } from 'express';
import { authOf } from '../../http/request.js';
import type { OrganizationService } from './organization.service.js';

export function organizationRouter(organizations: OrganizationService): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    res.json(await organizations.list(authOf(req)));
  });
  return router;
}
