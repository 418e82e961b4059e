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
import {
  ForwardingSlotSchema,
  ReplaceSlotsSchema,
  SlotRowSchema,
  UpdateSlotSchema,
} from './forwarding-slot.schemas.js';

const AgentParams = z.object({ agentId: z.uuid() });
const SlotParams = z.object({ agentId: z.uuid(), slotId: z.uuid() });

export function registerForwardingSlotPaths(registry: OpenAPIRegistry): void {
  const tags = ['Forwarding slots'];
  const base = '/v1/agents/{agentId}/forwarding-slots';
  const list = z.object({ data: z.array(ForwardingSlotSchema) });
  registry.registerPath({
    method: 'get',
    path: base,
    operationId: 'listForwardingSlots',
    ...access('forwarding:read', 'agent'),
    tags,
    summary: 'All forwarding slots of an agent (forwarding:read), ordered by slotnummer, not paginated',
    security: anyAuth,
    request: { params: AgentParams },
    responses: { 200: json(list, 'The slots'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'put',
    path: base,
    operationId: 'replaceForwardingSlots',
    ...access('forwarding:write', 'agent'),
    tags,
    summary:
      'Replace all slots atomically (forwarding:write): every row is validated first (400 lists all row problems as slots[i].field, nothing written), then one transaction; concurrent replacements are serialised',
    security: anyAuth,
    request: { params: AgentParams, body: jsonBody(ReplaceSlotsSchema) },
    responses: {
      200: json(
        list.extend({ replaced_count: z.number().int().openapi({ description: 'Number of slots removed' }) }),
        'The new slots',
      ),
      ...errorResponses(...AGENT_ROUTE_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: base,
    operationId: 'createForwardingSlot',
    ...access('forwarding:write', 'agent'),
    tags,
    summary: 'Create one slot (forwarding:write); 409 when the slotnummer is taken',
    security: anyAuth,
    request: { params: AgentParams, body: jsonBody(SlotRowSchema) },
    responses: { 201: json(ForwardingSlotSchema, 'The new slot'), ...errorResponses(...AGENT_ROUTE_ERRORS, 409) },
  });
  registry.registerPath({
    method: 'get',
    path: `${base}/{slotId}`,
    operationId: 'getForwardingSlot',
    ...access('forwarding:read', 'agent'),
    tags,
    summary: 'Get one slot (forwarding:read)',
    security: anyAuth,
    request: { params: SlotParams },
    responses: { 200: json(ForwardingSlotSchema, 'The slot'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'patch',
    path: `${base}/{slotId}`,
    operationId: 'updateForwardingSlot',
    ...access('forwarding:write', 'agent'),
    tags,
    summary: 'Update one slot (forwarding:write); 409 when the new slotnummer is taken',
    security: anyAuth,
    request: { params: SlotParams, body: jsonBody(UpdateSlotSchema) },
    responses: { 200: json(ForwardingSlotSchema, 'The updated slot'), ...errorResponses(...AGENT_ROUTE_ERRORS, 409) },
  });
  registry.registerPath({
    method: 'delete',
    path: `${base}/{slotId}`,
    operationId: 'deleteForwardingSlot',
    ...access('forwarding:write', 'agent'),
    tags,
    summary: 'Delete one slot (forwarding:write)',
    security: anyAuth,
    request: { params: SlotParams },
    responses: { 204: noContent, ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
}
