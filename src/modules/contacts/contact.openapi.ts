import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { agentOperations, resourceOperations } from '../../openapi/operations.js';
import { ContactSchema, CreateContactSchema, ListContactsQueryDoc, UpdateContactSchema } from './contact.schemas.js';

export function registerContactPaths(registry: OpenAPIRegistry): void {
  const contacts = resourceOperations(agentOperations(registry, 'Contacts'), {
    path: '/v1/agents/{agentId}/contacts',
    permission: 'contacts',
    operation: 'Contact',
    schema: ContactSchema,
  });
  contacts.list({ summary: 'List contacts (contacts:read), newest first', query: ListContactsQueryDoc });
  contacts.create({
    summary: 'Create a contact (contacts:write); 409 when another contact of the agent has the phone_number',
    body: CreateContactSchema,
    errors: [409],
  });
  contacts.get({ summary: 'Get one contact (contacts:read)' });
  contacts.update({
    summary: 'Update a contact (contacts:write); 409 when another contact of the agent has the phone_number',
    body: UpdateContactSchema,
    errors: [409],
  });
  contacts.delete({ summary: 'Delete a contact (contacts:write)' });
}
