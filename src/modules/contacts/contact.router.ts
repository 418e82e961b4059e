import { Router } from 'express';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse, uuidParams } from '../../api/validate.js';
import type { ContactService } from './contact.service.js';

const contactParams = uuidParams('agentId', 'contactId');

/** Mounted at /v1/agents/:agentId/contacts. */
export function contactRouter(contacts: ContactService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await contacts.list(authOf(req), agentId, req.query));
  });

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const { resource, failingTestCases } = await contacts.create(authOf(req), agentId, req.body, conditions);
    sendResource(req, res, resource, { status: 201, dryRun: conditions.dryRun, failingTestCases });
  });

  router.get('/:contactId', async (req, res) => {
    const { agentId, contactId } = parse(contactParams, req.params);
    sendResource(req, res, await contacts.get(authOf(req), agentId, contactId));
  });

  router.patch('/:contactId', async (req, res) => {
    const { agentId, contactId } = parse(contactParams, req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const { resource, failingTestCases } = await contacts.update(authOf(req), agentId, contactId, req.body, conditions);
    sendResource(req, res, resource, { dryRun: conditions.dryRun, failingTestCases });
  });

  router.delete('/:contactId', async (req, res) => {
    const { agentId, contactId } = parse(contactParams, req.params);
    await contacts.delete(authOf(req), agentId, contactId, writeConditions(req));
    res.status(204).end();
  });

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function contactResources(contacts: ContactService): Record<string, ResourceCheck> {
  return {
    '/v1/agents/{agentId}/contacts/{contactId}': resourceCheck(contactParams, (auth, p) =>
      contacts.get(auth, p.agentId, p.contactId),
    ),
  };
}
