import type { ApiModule } from '../../http/api-module.js';
import { webhookDeliveryRouter } from './webhook-delivery.router.js';
import type { WebhookDeliveryService } from './webhook-delivery.service.js';
import { webhookSecretRouter } from './webhook-secret.router.js';
import type { WebhookSecretService } from './webhook-secret.service.js';
import { registerWebhookPaths } from './webhook.openapi.js';

export const webhookModule: ApiModule<[WebhookDeliveryService, WebhookSecretService]> = {
  mounts: (deliveries, secrets) => [
    { path: '/agents/:agentId/webhook-deliveries', router: webhookDeliveryRouter(deliveries) },
    {
      path: '/organization/:orgId/webhook-secret',
      access: { tokenOnly: 'This endpoint' },
      router: webhookSecretRouter(secrets),
    },
  ],
  openapi: registerWebhookPaths,
};
