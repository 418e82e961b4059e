import { Router } from 'express';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import type { MeService } from './me.service.js';

/** Mounted at /v1/me; dashboard token only (me.module.ts). */
export function meRouter(me: MeService): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    sendResource(req, res, await me.get(authOf(req)));
  });

  router.patch('/', async (req, res) => {
    sendResource(req, res, await me.update(authOf(req), req.body, writeConditions(req)));
  });

  return router;
}
