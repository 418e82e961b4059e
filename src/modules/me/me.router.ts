import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { writeConditions } from '../../http/entity-tag.js';
import type { MeService } from './me.service.js';

/** Mounted at /v1/me; dashboard token only (me.module.ts). */
export function meRouter(me: MeService): Router {
  const router = Router();
  const route = routesOf(router);

  route.get('/').resource((auth) => me.get(auth));

  route.patch('/').resource((auth, _, req) => me.update(auth, req.body, writeConditions(req)));

  return router;
}
