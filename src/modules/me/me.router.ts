import { Router } from 'express';
import { authOf } from '../../http/request.js';
import type { MeService } from './me.service.js';

/** Mounted at /v1/me; dashboard token only (me.module.ts). */
export function meRouter(me: MeService): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    res.json(await me.get(authOf(req)));
  });

  router.patch('/', async (req, res) => {
    res.json(await me.update(authOf(req), req.body));
  });

  return router;
}
