import type { ApiModule } from '../../http/api-module.js';
import { webhookDeliveryRouter } from './webhook-delivery.router.js';
import type { WebhookDeliveryService } from './webhook-delivery.service.js';
import { webhookSecretRouter } from './webhook-secret.router.js';
import type { WebhookSecretService } from './webhook-secret.service.js';
import { agentWebhookTestRouter, meWebhookTestRouter } from './webhook-test.router.js';
import type { WebhookTestService } from './webhook-test.service.js';
import { registerWebhookPaths } from './webhook.openapi.js';

export const webhookModule: ApiModule<[WebhookDeliveryService, WebhookSecretService, WebhookTestService]> = {
  mounts: (deliveries, secrets, tests) => [
    { path: '/agents/:agentId/webhook-deliveries', router: webhookDeliveryRouter(deliveries) },
    { path: '/agents/:agentId/webhook', router: agentWebhookTestRouter(tests) },
    {
      path: '/organization/:orgId/webhook-secret',
      access: { tokenOnly: 'This endpoint' },
      router: webhookSecretRouter(secrets),
    },
    { path: '/me/webhook', access: { tokenOnly: 'This endpoint' }, router: meWebhookTestRouter(tests) },
  ],
  openapi: registerWebhookPaths,
};
