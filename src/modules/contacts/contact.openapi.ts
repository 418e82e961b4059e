import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  access,
  AGENT_ROUTE_ERRORS,
  anyAuth,
  errorResponses,
  json,
  jsonBody,
  noContent,
  paginated,
} from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { ContactSchema, CreateContactSchema, ListContactsQueryDoc, UpdateContactSchema } from './contact.schemas.js';

const AgentParams = z.object({ agentId: z.uuid() });
const ContactParams = z.object({ agentId: z.uuid(), contactId: z.uuid() });

export function registerContactPaths(registry: OpenAPIRegistry): void {
  const tags = ['Contacts'];
  const base = '/v1/agents/{agentId}/contacts';
  registry.registerPath({
    method: 'get',
    path: base,
    operationId: 'listContacts',
    ...access('contacts:read', 'agent'),
    tags,
    summary: 'List contacts (contacts:read), newest first',
    security: anyAuth,
    request: { params: AgentParams, query: ListContactsQueryDoc },
    responses: { 200: json(paginated(ContactSchema), 'A page of contacts'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'post',
    path: base,
    operationId: 'createContact',
    ...access('contacts:write', 'agent'),
    tags,
    summary: 'Create a contact (contacts:write); 409 when another contact of the agent has the phone_number',
    security: anyAuth,
    request: { params: AgentParams, body: jsonBody(CreateContactSchema) },
    responses: { 201: json(ContactSchema, 'The new contact'), ...errorResponses(...AGENT_ROUTE_ERRORS, 409) },
  });
  registry.registerPath({
    method: 'get',
    path: `${base}/{contactId}`,
    operationId: 'getContact',
    ...access('contacts:read', 'agent'),
    tags,
    summary: 'Get one contact (contacts:read)',
    security: anyAuth,
    request: { params: ContactParams },
    responses: { 200: json(ContactSchema, 'The contact'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'patch',
    path: `${base}/{contactId}`,
    operationId: 'updateContact',
    ...access('contacts:write', 'agent'),
    tags,
    summary: 'Update a contact (contacts:write); 409 when another contact of the agent has the phone_number',
    security: anyAuth,
    request: { params: ContactParams, body: jsonBody(UpdateContactSchema) },
    responses: { 200: json(ContactSchema, 'The updated contact'), ...errorResponses(...AGENT_ROUTE_ERRORS, 409) },
  });
  registry.registerPath({
    method: 'delete',
    path: `${base}/{contactId}`,
    operationId: 'deleteContact',
    ...access('contacts:write', 'agent'),
    tags,
    summary: 'Delete a contact (contacts:write)',
    security: anyAuth,
    request: { params: ContactParams },
    responses: { 204: noContent, ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
}
