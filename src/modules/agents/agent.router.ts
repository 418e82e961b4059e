import { Router } from 'express';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse } from '../../api/validate.js';
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

  router.get('/', async (req, res) => {
    res.json(await agents.list(authOf(req), req.query));
  });

  router.post('/', async (req, res) => {
    const fromTemplate = templates && typeof req.body === 'object' && req.body !== null && 'template_id' in req.body;
    if (fromTemplate)
      return sendResource(req, res, await templates.createAgent(authOf(req), req.body), { status: 201 });
    sendResource(req, res, await agents.create(authOf(req), req.body), { status: 201 });
  });

  router.get('/:agentId', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    sendResource(req, res, await agents.get(authOf(req), agentId));
  });

  router.patch('/:agentId', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const { resource, failingTestCases } = await agents.update(authOf(req), agentId, req.body, conditions);
    sendResource(req, res, resource, { dryRun: conditions.dryRun, failingTestCases });
  });

  router.delete('/:agentId', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    await agents.remove(authOf(req), agentId, writeConditions(req));
    res.status(204).end();
  });

  router.get('/:agentId/status', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await statuses.status(authOf(req), agentId));
  });

  router.post('/:agentId/greeting/preview', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await greetings.preview(authOf(req), agentId, req.body));
  });

  return router;
}
