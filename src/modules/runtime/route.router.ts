import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import type { RouteService } from './route.service.js';

/** Mounted at /v1/runtime. */
export function runtimeRouter(routes: RouteService): Router {
  const router = Router();
  const route = routesOf(router);

  route.post('/route').json((auth, _, req) => routes.route(auth, req.body));

  return router;
}
