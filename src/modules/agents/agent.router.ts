import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse } from '../../http/validate.js';
import type { AgentService } from './agent.service.js';

export function agentRouter(agents: AgentService): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    res.json(await agents.list(authOf(req), req.query));
  });

  router.get('/:agentId', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await agents.get(authOf(req), agentId));
  });

  return router;
}
