import type { Clock } from '../../clock.js';
import type { Db } from '../../db/knex.js';
import type { EventRecorder } from '../../events/event-recorder.js';
import { mountModule, type ApiModule, type MountedModule } from '../../http/api-module.js';
import type { AgentAccess } from '../agents/agent-access.js';
import { registerOutboundPaths } from './outbound.openapi.js';
import { OutboundRepository } from './outbound.repository.js';
import { campaignRouter, dispatchRouter, doNotCallRouter, outboundCallRouter } from './outbound.router.js';
import { CampaignService } from './campaign.service.js';
import { OutboundService } from './outbound.service.js';

export const outboundModule: ApiModule<[OutboundService, CampaignService]> = {
  mounts: (outbound, campaigns) => [
    { path: '/agents/:agentId/campaigns', router: campaignRouter(campaigns) },
    { path: '/agents/:agentId/outbound-calls', router: outboundCallRouter(outbound) },
    { path: '/organization/:orgId/do-not-call', router: doNotCallRouter(outbound) },
    { path: '/outbound', router: dispatchRouter(outbound) },
  ],
  openapi: registerOutboundPaths,
};

/** The outbound module's wiring, in one place: the container calls it once. */
export function buildOutboundModule(deps: {
  db: Db;
  agentAccess: AgentAccess;
  events: EventRecorder;
  clock: Clock;
  config: { OUTBOUND_MAX_CONCURRENT_PER_AGENT: number };
}): { module: MountedModule; service: OutboundService } {
  const repository = new OutboundRepository(deps.db);
  const campaigns = new CampaignService(deps.db, repository, deps.agentAccess, deps.clock);
  const service = new OutboundService(deps.db, repository, deps.agentAccess, deps.events, deps.clock, {
    maxConcurrentPerAgent: deps.config.OUTBOUND_MAX_CONCURRENT_PER_AGENT,
  });
  return { module: mountModule(outboundModule, service, campaigns), service };
}
