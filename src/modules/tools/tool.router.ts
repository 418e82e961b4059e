import type { Router } from 'express';
import { agentCollectionRouter } from '../../http/agent-collection-router.js';
import type { ToolService } from './tool.service.js';

/** Mounted at /v1/agents/:agentId/tools. */
export function toolRouter(tools: ToolService): Router {
  return agentCollectionRouter(tools, 'toolId');
}
