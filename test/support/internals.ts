import type { Logger } from 'pino';
import type { Clock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/db/knex.js';
import { EventRecorder } from '../../src/events/event-recorder.js';
import { KnowledgeBaseJobs, KnowledgeBaseProcessor } from '../../src/modules/knowledge-base/kb.worker.js';
import type { JobQueue } from '../../src/jobs/queue.js';
import { IdempotencyCleanupWorker } from '../../src/modules/idempotency/idempotency-cleanup.worker.js';
import { CallRetention } from '../../src/modules/calls/call-retention.worker.js';
import { AuditLogRepository } from '../../src/audit/audit-log.repository.js';
import { AuditRetention } from '../../src/modules/audit-log/audit-retention.worker.js';
import { IdempotencyRepository } from '../../src/modules/idempotency/idempotency.repository.js';
import { IdempotencyService } from '../../src/modules/idempotency/idempotency.service.js';
import { CallRepository } from '../../src/modules/calls/call.repository.js';
import { KnowledgeBaseIndexRepository } from '../../src/modules/knowledge-base/kb-index.repository.js';
import { WebSourceSync, webSourceOptionsFromConfig } from '../../src/modules/knowledge-base/web-source.js';
import { WebhookDeliveryRepository } from '../../src/modules/webhooks/webhook-delivery.repository.js';
import { WebhookDispatcher } from '../../src/modules/webhooks/webhook-dispatcher.js';
import { WebhookSecretRepository } from '../../src/modules/webhooks/webhook-secret.repository.js';
import { WebhookWorker } from '../../src/modules/webhooks/webhook.worker.js';
import { WebhookSweepRepository } from '../../src/modules/webhooks/webhook-sweep.repository.js';
import { WebhookSweeper } from '../../src/modules/webhooks/webhook-sweeper.js';
import type { Metrics } from '../../src/metrics/metrics.js';
import { guardOptionsFromConfig } from '../../src/outgoing/guarded-request.js';

export type Internals = ReturnType<typeof buildInternals>;

/**
 * The background pieces tests drive directly (record an event, drain the webhook queue, process a
 * document, run retention), wired the way src/container.ts wires them, on the same database, queue,
 * clock and config as the app under test. The production container does not hand them out.
 */
export function buildInternals(deps: {
  db: Db;
  queue: JobQueue;
  clock: Clock;
  config: Config;
  logger: Logger;
  metrics?: Metrics;
}) {
  const { db, queue, clock, config, logger } = deps;
  const dispatcher = new WebhookDispatcher(
    db,
    queue,
    new WebhookDeliveryRepository(db),
    new WebhookSecretRepository(db),
    clock,
    guardOptionsFromConfig(config),
    logger,
    deps.metrics,
    config.WEBHOOK_RETRY_SCHEDULE_SECONDS,
  );
  const kbJobs = new KnowledgeBaseJobs(queue);
  const callRepository = new CallRepository(db);
  const events = new EventRecorder(queue);
  return {
    events,
    webhookWorker: new WebhookWorker(db, queue, dispatcher, logger),
    webhookSweeper: new WebhookSweeper(new WebhookSweepRepository(db), queue, clock, logger),
    kbJobs,
    kbProcessor: new KnowledgeBaseProcessor(db, new KnowledgeBaseIndexRepository(db), kbJobs, clock, logger, {
      events,
      maxPdfPages: config.KB_MAX_PDF_PAGES,
      web: new WebSourceSync(db, kbJobs, clock, logger, webSourceOptionsFromConfig(config)),
    }),
    callRepository,
    callRetention: new CallRetention(callRepository, clock, logger),
    auditRetention: new AuditRetention(new AuditLogRepository(db), config.AUDIT_RETENTION_DAYS, clock, logger),
    idempotencyCleanup: new IdempotencyCleanupWorker(
      queue,
      new IdempotencyService(new IdempotencyRepository(db), clock),
      logger,
    ),
  };
}
