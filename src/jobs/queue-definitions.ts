import type PgBoss from 'pg-boss';

export type QueueDefinition = { name: string; options: Omit<PgBoss.Queue, 'name'> };

/** Fan an event out to its webhook deliveries (enqueued by EventRecorder in the event's transaction). */
export const EVENT_DISPATCH_QUEUE = 'events.dispatch';
/** A webhook delivery attempt; one job per attempt (the first one and every redelivery). */
export const WEBHOOK_SEND_QUEUE = 'webhooks.send';
/** Chunk and index one knowledge-base document. */
export const KB_PROCESS_QUEUE = 'kb.process';
/** Re-enqueue documents whose worker died (scheduled). */
export const KB_SWEEP_QUEUE = 'kb.sweep';
/** Re-dispatch webhook events whose dispatch job gave up (scheduled). */
export const WEBHOOK_SWEEP_QUEUE = 'webhooks.sweep';
/** Purge personal data of calls past their retention (scheduled). */
export const RETENTION_QUEUE = 'calls.retention';
/** Delete audit entries past AUDIT_RETENTION_DAYS (scheduled). */
export const AUDIT_RETENTION_QUEUE = 'audit.retention';
/** Create the coming months' partitions and empty the default partitions (scheduled). */
export const PARTITIONS_QUEUE = 'db.partitions';
/** Delete expired Idempotency-Key records (scheduled). */
export const IDEMPOTENCY_CLEANUP_QUEUE = 'idempotency.cleanup';
/** Delete outbound consent records past their keep_until (scheduled). */
export const CONSENT_EXPIRY_QUEUE = 'outbound.consent-expiry';
/** End running experiments whose ends_at passed or whose max_calls is reached (scheduled). */
export const EXPERIMENT_END_QUEUE = 'experiments.end';

/** A worker that holds a document longer than this is presumed dead (also pg-boss's job expiry). */
export const KB_PROCESSING_TIMEOUT_SECONDS = 300;

export const KB_JOB_OPTIONS = {
  retryLimit: 3,
  retryDelay: 10,
  retryBackoff: true,
  expireInSeconds: KB_PROCESSING_TIMEOUT_SECONDS,
};

/**
 * Every queue, created (or updated) when a JobQueue starts. pg-boss 10 silently drops a job sent to a
 * queue that does not exist, so a queue must be listed here before anything is sent to it.
 *
 * Retries here only cover a worker that died or lost the database mid-job (pg-boss expires the
 * active job and runs it again). A webhook attempt that got an answer or an error is recorded and the
 * job completes: it is never repeated automatically (the job id makes a re-run record at most once).
 */
export const QUEUE_DEFINITIONS: QueueDefinition[] = [
  { name: EVENT_DISPATCH_QUEUE, options: { retryLimit: 10, retryDelay: 5, retryBackoff: true, expireInSeconds: 60 } },
  { name: WEBHOOK_SEND_QUEUE, options: { retryLimit: 3, retryDelay: 30, retryBackoff: true, expireInSeconds: 60 } },
  // `short`: while a job for a document still waits, no second one is queued (singletonKey = document id).
  { name: KB_PROCESS_QUEUE, options: { policy: 'short', ...KB_JOB_OPTIONS } },
  { name: KB_SWEEP_QUEUE, options: {} },
  // `short`: a sweep that is still waiting is not queued twice.
  { name: WEBHOOK_SWEEP_QUEUE, options: { policy: 'short' } },
  { name: RETENTION_QUEUE, options: { policy: 'short' } },
  { name: AUDIT_RETENTION_QUEUE, options: { policy: 'short' } },
  { name: IDEMPOTENCY_CLEANUP_QUEUE, options: { policy: 'short' } },
  { name: CONSENT_EXPIRY_QUEUE, options: { policy: 'short' } },
  { name: PARTITIONS_QUEUE, options: { policy: 'short' } },
  { name: EXPERIMENT_END_QUEUE, options: { policy: 'short' } },
];
