import type { SharedDeps, BuiltModule } from '../module.js';
import { registerForwardingSlotPaths } from './forwarding-slot.openapi.js';
import { ForwardingSlotRepository } from './forwarding-slot.repository.js';
import { forwardingSlotResources, forwardingSlotRouter } from './forwarding-slot.router.js';
import { ForwardingSlotService } from './forwarding-slot.service.js';

export function buildForwardingSlotModule(deps: SharedDeps): BuiltModule {
  const { db, audited, agentAccess, clock, testCaseGuard } = deps;
  const slots = new ForwardingSlotService(audited, new ForwardingSlotRepository(db), agentAccess, clock, testCaseGuard);
  return {
    module: {
      mounts: [
        {
          path: '/agents/:agentId/forwarding-slots',
          router: forwardingSlotRouter(slots),
          resources: forwardingSlotResources(slots),
        },
      ],
      openapi: registerForwardingSlotPaths,
    },
  };
}
