import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody } from '../../openapi/common.js';
import { agentOperations, pathParams, resourceOperations } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import {
  ForwardingSlotSchema,
  ReplaceSlotsSchema,
  SlotRowSchema,
  UpdateSlotSchema,
} from './forwarding-slot.schemas.js';

export function registerForwardingSlotPaths(registry: OpenAPIRegistry): void {
  const register = agentOperations(registry, 'Forwarding slots');
  const path = '/v1/agents/{agentId}/forwarding-slots';
  const slots = resourceOperations(register, {
    path,
    permission: 'forwarding',
    operation: 'ForwardingSlot',
    noun: 'slot',
    schema: ForwardingSlotSchema,
  });
  slots.list({ summary: 'All forwarding slots of an agent (forwarding:read), ordered by slotnummer, not paginated' });
  register({
    method: 'put',
    path,
    operationId: 'replaceForwardingSlots',
    permission: 'forwarding:write',
    summary:
      'Replace all slots atomically (forwarding:write): every row is validated first (400 lists all row problems as slots[i].field, nothing written), then one transaction; concurrent replacements are serialised',
    request: { params: pathParams(path), body: jsonBody(ReplaceSlotsSchema) },
    responses: {
      200: json(
        z.object({
          data: z.array(ForwardingSlotSchema),
          replaced_count: z.number().int().openapi({ description: 'Number of slots removed' }),
        }),
        'The new slots',
      ),
    },
  });
  slots.create({
    summary: 'Create one slot (forwarding:write); 409 when the slotnummer is taken',
    body: SlotRowSchema,
    errors: [409],
  });
  slots.get({ summary: 'Get one slot (forwarding:read)' });
  slots.update({
    summary: 'Update one slot (forwarding:write); 409 when the new slotnummer is taken',
    body: UpdateSlotSchema,
    errors: [409],
  });
  slots.delete({ summary: 'Delete one slot (forwarding:write)' });
}
