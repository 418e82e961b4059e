import { Router } from 'express';
import { requireDashboardToken } from '../../http/dashboard-token.js';
import { authOf } from '../../http/request.js';
import type { MeService } from './me.service.js';

/** Mounted under /v1/me. */
export function meRouter(me: MeService): Router {
  const router = Router();

  router.get('/', requireDashboardToken, async (req, res) => {
    res.json(await me.get(authOf(req)));
  });

  router.patch('/', requireDashboardToken, async (req, res) => {
    res.json(await me.update(authOf(req), req.body));
  });

  return router;
}
