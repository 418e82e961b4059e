import type { SharedDeps, BuiltModule } from '../module.js';
import { IdempotencyCleanupWorker } from './idempotency-cleanup.worker.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import { IdempotencyService } from './idempotency.service.js';

/**
 * No routes: the store behind the `Idempotency-Key` middleware (src/app.ts takes `service`) and
 * the worker that removes expired records.
 */
export function buildIdempotencyModule({ db, clock, queue, logger }: SharedDeps): BuiltModule<{
  service: IdempotencyService;
  cleanup: IdempotencyCleanupWorker;
}> {
  const service = new IdempotencyService(new IdempotencyRepository(db), clock);
  const cleanup = new IdempotencyCleanupWorker(queue, service, logger);
  return { workers: [cleanup], service, cleanup };
}
