import { Router } from 'express';
import type { HealthService } from './health.service.js';

export function healthRouter(health: HealthService): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    const result = await health.check();
    res.status(result.status === 'ok' ? 200 : 503).json(result);
  });
  return router;
}
