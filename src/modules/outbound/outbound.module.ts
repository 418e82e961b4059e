import type { BuiltModule, SharedDeps } from '../module.js';
import { registerOutboundPaths } from './outbound.openapi.js';
import { OutboundRepository } from './outbound.repository.js';
import {
  campaignRouter,
  dispatchRouter,
  doNotCallRouter,
  outboundCallRouter,
  outboundResources,
} from './outbound.router.js';
import { CampaignService } from './campaign.service.js';
import { OutboundService } from './outbound.service.js';
import { ConsentExpiryWorker } from './consent-expiry.worker.js';

/**
 * Exports its service (the call intake adds a number that opted out to the do-not-call list) and
 * the consent expiry that tests drive directly.
 */
export function buildOutboundModule(
  deps: SharedDeps,
): BuiltModule<{ service: OutboundService; consentExpiry: ConsentExpiryWorker }> {
  const { db, audited, agentAccess, clock, config, logger, queue } = deps;
  const repository = new OutboundRepository(db);
  const campaigns = new CampaignService(audited, repository, agentAccess, clock);
  const service = new OutboundService(audited, repository, agentAccess, deps.events, clock, {
    maxConcurrentPerAgent: config.OUTBOUND_MAX_CONCURRENT_PER_AGENT,
  });
  const resources = outboundResources(service, campaigns);
  const consentExpiry = new ConsentExpiryWorker(queue, repository, clock, logger);
  return {
    module: {
      mounts: [
        { path: '/agents/:agentId/campaigns', router: campaignRouter(campaigns) },
        { path: '/agents/:agentId/outbound-calls', router: outboundCallRouter(service), resources },
        { path: '/organization/:orgId/do-not-call', router: doNotCallRouter(service) },
        { path: '/outbound', router: dispatchRouter(service) },
      ],
      openapi: registerOutboundPaths,
    },
    workers: [consentExpiry],
    service,
    consentExpiry,
  };
}
