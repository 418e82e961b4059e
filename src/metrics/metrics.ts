import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../db/knex.js';
import type { RateLimitStore } from '../http/rate-limit-store.js';
import type { JobQueue } from '../jobs/queue.js';
import { knexPoolCounts } from '../platform/knex.js';

/** A knex pool as tarn.js exposes it. */

export type RouteLabel = (method: string, path: string) => string;

/**
 * The Prometheus metrics of one app instance, in a registry of its own (several apps in one test
 * process never share counters). Request, refusal and webhook counters are pushed as things
 * happen; queue and pool gauges are read when /metrics is scraped.
 */
export class Metrics {
  readonly registry = new Registry();

  private readonly requestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern (as in the OpenAPI document) and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly rateLimitRefusals = this.counter(
    'rate_limit_refusals_total',
    'Requests refused with 429 by the per-key rate limit, by the window that was exhausted',
    ['window'],
  );

  private readonly webhookDeliveries = this.counter(
    'webhook_delivery_attempts_total',
    'Webhook delivery attempts by event type and outcome (succeeded or failed)',
    ['event_type', 'outcome'],
  );

  private readonly webhookTestPings = this.counter(
    'webhook_test_pings_total',
    'Webhook test pings (POST .../webhook/test) by outcome: succeeded, http_error, timeout, network or refused',
    ['outcome'],
  );

  private counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  constructor(
    db: Db,
    queue: JobQueue | undefined,
    options: { defaultMetrics?: boolean; rateLimitStore?: RateLimitStore } = {},
  ) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.rateLimitStoreMetrics(options.rateLimitStore);
    new Gauge({
      name: 'db_pool_connections',
      help: 'Database pool connections by state (used, free, pending acquires, max)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const counts = knexPoolCounts(db);
        this.set({ state: 'used' }, counts.used);
        this.set({ state: 'free' }, counts.free);
        this.set({ state: 'pending' }, counts.pending);
        this.set({ state: 'max' }, counts.max);
      },
    });
    if (!queue) return;
    // One query per scrape fills both gauges; the first registered runs it, so both print fresh values.
    new Gauge({
      name: 'job_queue_depth',
      help: 'Jobs waiting to run (created or retry) per queue',
      labelNames: ['queue'] as const,
      registers: [this.registry],
      async collect() {
        // Without the database the scrape still answers (process and HTTP metrics); these keep their last values.
        const stats = await queue.waitingStats().catch(() => []);
        for (const stat of stats) {
          this.set({ queue: stat.name }, stat.depth);
          age.set({ queue: stat.name }, stat.oldestAgeSeconds);
        }
      },
    });
    const age = new Gauge({
      name: 'job_queue_oldest_age_seconds',
      help: 'Age of the oldest waiting job per queue; 0 when the queue is empty',
      labelNames: ['queue'] as const,
      registers: [this.registry],
    });
  }

  /** Read from the store at each scrape: it counts for itself (it is built before the app and its metrics). */
  private rateLimitStoreMetrics(store: RateLimitStore | undefined): void {
    const health = () => store?.health?.() ?? { degraded: false, degradations: 0, fallbackRequests: 0 };
    new Gauge({
      name: 'rate_limit_store_degraded',
      help: '1 while the shared rate-limit counters (Redis) are unreachable and this instance counts alone',
      registers: [this.registry],
      collect() {
        this.set(health().degraded ? 1 : 0);
      },
    });
    // The store keeps the totals; each scrape copies them.
    const registers = [this.registry];
    const total = (name: string, help: string, read: (h: ReturnType<typeof health>) => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read(health()));
        },
      });
    total(
      'rate_limit_store_degradations_total',
      'Times this instance lost the shared rate-limit counters (Redis) and fell back to its own',
      (h) => h.degradations,
    );
    total(
      'rate_limit_store_fallback_requests_total',
      "Requests counted in this instance's memory because the shared rate-limit counters were unreachable",
      (h) => h.fallbackRequests,
    );
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requestDuration.observe({ method, route, status: String(status) }, seconds);
  }

  rateLimitRefused(window: 'minute' | 'hour'): void {
    this.rateLimitRefusals.inc({ window });
  }

  webhookAttempt(eventType: string, outcome: string): void {
    this.webhookDeliveries.inc({ event_type: eventType, outcome });
  }

  webhookTestPing(outcome: string): void {
    this.webhookTestPings.inc({ outcome });
  }
}
