import type { Router } from 'express';
import { agentCollectionResources, agentCollectionRouter } from '../../http/agent-collection-router.js';
import type { ResourceCheck } from '../../http/strict-query.js';
import type { ContactService } from './contact.service.js';

/** Mounted at /v1/agents/:agentId/contacts. */
export function contactRouter(contacts: ContactService): Router {
  return agentCollectionRouter(contacts, 'contactId');
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function contactResources(contacts: ContactService): Record<string, ResourceCheck> {
  return agentCollectionResources(contacts, 'contacts', 'contactId');
}
