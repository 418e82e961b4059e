import type { Logger } from 'pino';
import type { Clock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/db/knex.js';
import { EventRecorder } from '../../src/events/event-recorder.js';
import { KnowledgeBaseJobs, KnowledgeBaseProcessor } from '../../src/jobs/kb-processor.js';
import type { JobQueue } from '../../src/jobs/queue.js';
import { CallRetention } from '../../src/jobs/retention.js';
import { CallRepository } from '../../src/modules/calls/call.repository.js';
import { KnowledgeBaseIndexRepository } from '../../src/modules/knowledge-base/kb-index.repository.js';
import { WebhookDeliveryRepository } from '../../src/modules/webhooks/webhook-delivery.repository.js';
import { WebhookDispatcher } from '../../src/modules/webhooks/webhook-dispatcher.js';
import { WebhookSecretRepository } from '../../src/modules/webhooks/webhook-secret.repository.js';
import { WebhookWorker } from '../../src/modules/webhooks/webhook.worker.js';
import { guardOptionsFromConfig } from '../../src/outgoing/guarded-request.js';

export type Internals = ReturnType<typeof buildInternals>;

/**
 * The background pieces tests drive directly (record an event, drain the webhook queue, process a
 * document, run retention), wired the way src/container.ts wires them, on the same database, queue,
 * clock and config as the app under test. The production container does not hand them out.
 */
export function buildInternals(deps: { db: Db; queue: JobQueue; clock: Clock; config: Config; logger: Logger }) {
  const { db, queue, clock, config, logger } = deps;
  const dispatcher = new WebhookDispatcher(
    db,
    queue,
    new WebhookDeliveryRepository(db),
    new WebhookSecretRepository(db),
    clock,
    guardOptionsFromConfig(config),
    logger,
  );
  const kbJobs = new KnowledgeBaseJobs(queue);
  const callRepository = new CallRepository(db);
  return {
    events: new EventRecorder(queue),
    webhookWorker: new WebhookWorker(db, queue, dispatcher, new WebhookDeliveryRepository(db), logger),
    kbJobs,
    kbProcessor: new KnowledgeBaseProcessor(new KnowledgeBaseIndexRepository(db), kbJobs, clock, logger),
    callRepository,
    callRetention: new CallRetention(callRepository, clock, logger),
  };
}
