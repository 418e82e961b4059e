import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  access,
  AGENT_ROUTE_ERRORS,
  anyAuth,
  errorResponses,
  json,
  jsonBody,
  noContent,
} from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { CreateToolDoc, ToolSchema, UpdateToolDoc } from './tool.schemas.js';

const AgentParams = z.object({ agentId: z.uuid() });
const ToolParams = z.object({ agentId: z.uuid(), toolId: z.uuid() });

export function registerToolPaths(registry: OpenAPIRegistry): void {
  const tags = ['Tools'];
  const base = '/v1/agents/{agentId}/tools';
  registry.registerPath({
    method: 'get',
    path: base,
    operationId: 'listTools',
    ...access('tools:read', 'agent'),
    tags,
    summary: 'List the tools of an agent (tools:read), not paginated, highest priority (lowest number) first',
    security: anyAuth,
    request: { params: AgentParams },
    responses: {
      200: json(z.object({ data: z.array(ToolSchema) }), 'The tools'),
      ...errorResponses(...AGENT_ROUTE_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: base,
    operationId: 'createTool',
    ...access('tools:write', 'agent'),
    tags,
    summary: 'Create a tool (tools:write); config is validated against the schema of its tool_type',
    security: anyAuth,
    request: { params: AgentParams, body: jsonBody(CreateToolDoc) },
    responses: { 201: json(ToolSchema, 'The new tool'), ...errorResponses(...AGENT_ROUTE_ERRORS, 409) },
  });
  registry.registerPath({
    method: 'get',
    path: `${base}/{toolId}`,
    operationId: 'getTool',
    ...access('tools:read', 'agent'),
    tags,
    summary: 'Get one tool (tools:read)',
    security: anyAuth,
    request: { params: ToolParams },
    responses: { 200: json(ToolSchema, 'The tool'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'patch',
    path: `${base}/{toolId}`,
    operationId: 'updateTool',
    ...access('tools:write', 'agent'),
    tags,
    summary:
      'Update a tool (tools:write); tool_type cannot change; 409 on a taken name or a rename while the workflow names the tool',
    security: anyAuth,
    request: { params: ToolParams, body: jsonBody(UpdateToolDoc) },
    responses: { 200: json(ToolSchema, 'The updated tool'), ...errorResponses(...AGENT_ROUTE_ERRORS, 409) },
  });
  registry.registerPath({
    method: 'delete',
    path: `${base}/{toolId}`,
    operationId: 'deleteTool',
    ...access('tools:write', 'agent'),
    tags,
    summary: "Delete a tool (tools:write); 409 while the agent's workflow names it",
    security: anyAuth,
    request: { params: ToolParams },
    responses: { 204: noContent, ...errorResponses(...AGENT_ROUTE_ERRORS, 409) },
  });
}
