import type { Router } from 'express';
import { agentCollectionRouter } from '../../http/agent-collection-router.js';
import type { ContactService } from './contact.service.js';

/** Mounted at /v1/agents/:agentId/contacts. */
export function contactRouter(contacts: ContactService): Router {
  return agentCollectionRouter(contacts, 'contactId');
}
