import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody, PaginationQuerySchema } from '../../openapi/common.js';
import { agentOperations, operationGroup, resourceOperations, type Resource } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import { AgentFromTemplateSchema } from '../agent-templates/template.schemas.js';
import { agentCreateSchema, agentPatchSchema } from './agent-input.schemas.js';
import { AgentScheduleSchema, AgentSchema, ScheduleExceptionSchema } from './agent.schemas.js';
import { GreetingPreviewRequestSchema, GreetingPreviewSchema } from './greeting-preview.schemas.js';

export const AgentStatusSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    is_active: z.boolean(),
    schedule: AgentScheduleSchema.nullable(),
    timezone: z.string().openapi({ description: 'The schedule zone, or Europe/Berlin without a schedule' }),
    is_within_schedule: z.boolean().openapi({
      description: 'true without a schedule; a dated exception decides first, then a public holiday closes the day',
    }),
    reason: z.enum(['exception', 'holiday', 'schedule']).openapi({
      description: 'What decided is_within_schedule: a dated exception, a public holiday, or the weekly rules',
    }),
    // A union rather than .nullable(): on a registered schema that gives allOf [ref, object|null],
    // which a null can never satisfy (the ref demands an object).
    exception: z
      .union([ScheduleExceptionSchema, z.null()])
      .openapi({ description: 'The exception applying now, if any' }),
    is_holiday: z.boolean(),
    holiday: z.object({ date: z.string(), name: z.string() }).nullable(),
    accepting_calls: z.boolean().openapi({
      description: 'is_active and is_within_schedule, and not on vacation (then the backup takes the calls)',
    }),
    routed_agent_id: z.uuid().nullable().openapi({ description: 'This agent, its active backup, or null' }),
    next_change_at: z.iso
      .datetime()
      .nullable()
      .openapi({ description: 'When is_within_schedule next flips; null if never' }),
    on_vacation: z.boolean().openapi({ description: 'vacation_mode is set and vacation_end (if any) has not passed' }),
    vacation_mode: z.boolean(),
    vacation_end: z.iso.datetime().nullable(),
    vacation_notdienst: z.boolean(),
    accepting_emergency_calls: z.boolean().openapi({
      description:
        'Emergency (Notdienst) calls reach this agent: as accepting_calls, and during vacation only with vacation_notdienst',
    }),
  })
  .openapi('AgentStatus');

const options = { allowPrivateWebhookTargets: false };

/** The list and create operations read across agents; the item operations act on one. */
const agentResource: Resource = { path: '/v1/agents', permission: 'agents', operation: 'Agent', schema: AgentSchema };

export function registerAgentPaths(registry: OpenAPIRegistry): void {
  const registerCollection = operationGroup(registry, {
    tags: ['Agents'],
    agentScope: 'filtered',
    errors: [400, 401, 403, 429],
  });
  const collection = resourceOperations(registerCollection, agentResource);
  collection.list({
    summary: 'List agents (agents:read), newest first, only agents the key may access',
    query: PaginationQuerySchema,
  });
  collection.create({
    agentScope: 'unrestricted',
    summary: 'Create an agent (agents:write; not for keys restricted to certain agents)',
    description:
      '`organization_id` is required when the caller may create agents in several organizations. With `template_id` ' +
      'the agent comes from an agent template (GET /v1/agent-templates) with its `variables` filled in (a missing one ' +
      'is a 400 naming it) and all it holds (tools, employees, documents...).',
    body: z.union([agentCreateSchema(options), AgentFromTemplateSchema]),
    errors: [404, 409, 413],
  });
  const register = agentOperations(registry, 'Agents');
  const agents = resourceOperations(register, agentResource);
  agents.get({ summary: 'Get one agent (agents:read)' });
  agents.update({
    summary: 'Update agent settings (agents:write); strict: unknown and read-only fields are refused',
    body: agentPatchSchema(options),
    errors: [413],
  });
  agents.delete({
    summary: 'Delete an agent (agents:write); 409 while another agent names it as backup',
    errors: [409],
  });
  register({
    method: 'get',
    path: '/v1/agents/{agentId}/status',
    operationId: 'getAgentStatus',
    permission: 'agents:read',
    summary: 'Schedule, public-holiday and routing status now (agents:read)',
    responses: { 200: json(AgentStatusSchema, 'The status') },
  });
  register({
    method: 'post',
    path: '/v1/agents/{agentId}/greeting/preview',
    operationId: 'previewGreeting',
    permission: 'agents:read',
    summary: 'Which greeting would be spoken to a caller, and why (agents:read)',
    description:
      'What the caller may not read is not looked up: without contacts:read `contact` is null and the greeting is chosen as for an unknown caller; without calls:read the calls of today are not counted (`calls_today` null, variants judged with 0 unless the request gives `calls_today`).',
    request: { body: jsonBody(GreetingPreviewRequestSchema) },
    responses: { 200: json(GreetingPreviewSchema, 'The chosen greeting') },
  });
}
