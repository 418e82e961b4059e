import { Router } from 'express';
import { authOf } from '../../http/request.js';
import type { RouteService } from './route.service.js';

/** Mounted at /v1/runtime. */
export function runtimeRouter(routes: RouteService): Router {
  const router = Router();

  router.post('/route', async (req, res) => {
    res.json(await routes.route(authOf(req), req.body));
  });

  return router;
}
