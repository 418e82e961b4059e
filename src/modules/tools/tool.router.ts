import type { Router } from 'express';
import { agentCollectionResources, agentCollectionRouter } from '../../http/agent-collection-router.js';
import type { ResourceCheck } from '../../http/strict-query.js';
import type { ToolService } from './tool.service.js';

/** Mounted at /v1/agents/:agentId/tools. */
export function toolRouter(tools: ToolService): Router {
  return agentCollectionRouter(tools, 'toolId');
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function toolResources(tools: ToolService): Record<string, ResourceCheck> {
  return agentCollectionResources(tools, 'tools', 'toolId');
}
