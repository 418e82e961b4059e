import { guardOptionsFromConfig } from '../../outgoing/guarded-request.js';
import type { SharedDeps, BuiltModule } from '../module.js';
import { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import { webhookDeliveryRouter } from './webhook-delivery.router.js';
import { WebhookDeliveryService } from './webhook-delivery.service.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { WebhookSecretRepository } from './webhook-secret.repository.js';
import { webhookSecretRouter } from './webhook-secret.router.js';
import { WebhookSecretService } from './webhook-secret.service.js';
import { WebhookSweepRepository } from './webhook-sweep.repository.js';
import { WebhookSweeper, WebhookSweepWorker } from './webhook-sweeper.js';
import { agentWebhookTestRouter, meWebhookTestRouter } from './webhook-test.router.js';
import { WebhookTestService } from './webhook-test.service.js';
import { WebhookWorker } from './webhook.worker.js';
import { registerWebhookPaths } from './webhook.openapi.js';

/** Exports the worker and the sweeper that tests drive directly. */
export function buildWebhookModule(deps: SharedDeps): BuiltModule<{ worker: WebhookWorker; sweeper: WebhookSweeper }> {
  const { db, audited, queue, clock, config, logger, agentAccess } = deps;
  const deliveries = new WebhookDeliveryRepository(db);
  const secrets = new WebhookSecretRepository(db);
  // Background work (and the test ping, which stores nothing): plain transactions, no audit row.
  const dispatcher = new WebhookDispatcher({
    db,
    queue,
    deliveries,
    secrets,
    clock,
    guard: guardOptionsFromConfig(config),
    logger,
    metrics: deps.metrics,
    retrySchedule: config.WEBHOOK_RETRY_SCHEDULE_SECONDS,
  });
  const worker = new WebhookWorker(db, queue, dispatcher, logger);
  const sweeper = new WebhookSweeper(new WebhookSweepRepository(db), queue, clock, logger);
  const deliveryService = new WebhookDeliveryService(audited, deliveries, agentAccess, dispatcher, clock, deps.reads);
  const secretService = new WebhookSecretService(secrets, clock);
  const tests = new WebhookTestService(agentAccess, deliveries, dispatcher);
  return {
    module: {
      mounts: [
        { path: '/agents/:agentId/webhook-deliveries', router: webhookDeliveryRouter(deliveryService) },
        { path: '/agents/:agentId/webhook', router: agentWebhookTestRouter(tests) },
        {
          path: '/organization/:orgId/webhook-secret',
          access: { tokenOnly: 'This endpoint' },
          router: webhookSecretRouter(secretService),
        },
        { path: '/me/webhook', access: { tokenOnly: 'This endpoint' }, router: meWebhookTestRouter(tests) },
      ],
      openapi: registerWebhookPaths,
    },
    workers: [worker, new WebhookSweepWorker(queue, sweeper)],
    worker,
    sweeper,
  };
}
