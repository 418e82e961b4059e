import type { Clock } from '../../clock.js';
import type { Db } from '../../db/knex.js';

export type Health = {
  status: 'ok' | 'degraded';
  version: string;
  commit: string;
  timestamp: string;
  checks: { database: 'ok' | 'unavailable' };
};

const HEALTH_TIMEOUT_MS = 2000;

export class HealthService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly build: { version: string; commit: string },
  ) {}

  async check(): Promise<Health> {
    // The answer waits 2 s at most. The query keeps its connection until it is answered, or until
    // the silence watchdog cuts it (a cancel would need a new connection, which a silent database
    // does not give within the bound).
    let timer: NodeJS.Timeout | undefined;
    const database = await Promise.race([
      this.db.raw('SELECT 1').then(() => 'ok' as const),
      new Promise<'unavailable'>((resolve) => (timer = setTimeout(resolve, HEALTH_TIMEOUT_MS, 'unavailable'))),
    ])
      .catch(() => 'unavailable' as const)
      .finally(() => clearTimeout(timer));
    return {
      status: database === 'ok' ? 'ok' : 'degraded',
      ...this.build,
      timestamp: this.clock.now().toISOString(),
      checks: { database },
    };
  }
}
