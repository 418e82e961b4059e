import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { agentIdParams } from '../../api/validate.js';
import type { AgentStatusService } from './agent-status.service.js';
import type { AuthContext } from '../../auth/auth-context.js';
import type { Agent } from './agent-reads.js';
import type { AgentService } from './agent.service.js';
import type { GreetingPreviewService } from './greeting-preview.service.js';

/** Creates an agent from an agent template (POST /v1/agents with `template_id`; the agent-templates module). */
export type AgentFromTemplate = { createAgent(auth: AuthContext, body: unknown): Promise<Agent> };

export function agentRouter(
  agents: AgentService,
  statuses: AgentStatusService,
  greetings: GreetingPreviewService,
  templates?: AgentFromTemplate,
): Router {
  const router = Router();
  const route = routesOf(router);

  route.get('/').json((auth, _, req) => agents.list(auth, req.query));

  router.post('/', async (req, res) => {
    const fromTemplate = templates && typeof req.body === 'object' && req.body !== null && 'template_id' in req.body;
    if (fromTemplate)
      return sendResource(req, res, await templates.createAgent(authOf(req), req.body), { status: 201 });
    sendResource(req, res, await agents.create(authOf(req), req.body), { status: 201 });
  });

  route.get('/:agentId', agentIdParams).resource((auth, { agentId }) => agents.get(auth, agentId));

  route
    .patch('/:agentId', agentIdParams)
    .checkedWrite((auth, { agentId }, req, conditions) => agents.update(auth, agentId, req.body, conditions));

  route
    .delete('/:agentId', agentIdParams)
    .noContent((auth, { agentId }, req) => agents.remove(auth, agentId, writeConditions(req)));

  route.get('/:agentId/status', agentIdParams).json((auth, { agentId }) => statuses.status(auth, agentId));

  route
    .post('/:agentId/greeting/preview', agentIdParams)
    .json((auth, { agentId }, req) => greetings.preview(auth, agentId, req.body));

  return router;
}
