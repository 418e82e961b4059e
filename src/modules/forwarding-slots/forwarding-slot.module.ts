import type { ApiModule } from '../../http/api-module.js';
import { registerForwardingSlotPaths } from './forwarding-slot.openapi.js';
import { forwardingSlotResources, forwardingSlotRouter } from './forwarding-slot.router.js';
import type { ForwardingSlotService } from './forwarding-slot.service.js';

export const forwardingSlotModule: ApiModule<[ForwardingSlotService]> = {
  mounts: (slots) => [
    {
      path: '/agents/:agentId/forwarding-slots',
      router: forwardingSlotRouter(slots),
      resources: forwardingSlotResources(slots),
    },
  ],
  openapi: registerForwardingSlotPaths,
};
