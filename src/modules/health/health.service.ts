import type { Clock } from '../../clock.js';
import type { Db } from '../../db/knex.js';

export type Health = {
  status: 'ok' | 'degraded';
  version: string;
  commit: string;
  timestamp: string;
  checks: { database: 'ok' | 'unavailable' };
};

export class HealthService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly build: { version: string; commit: string },
  ) {}

  async check(): Promise<Health> {
    const database = await this.db
      .raw('SELECT 1')
      .timeout(2000, { cancel: true })
      .then(() => 'ok' as const)
      .catch(() => 'unavailable' as const);
    return {
      status: database === 'ok' ? 'ok' : 'degraded',
      ...this.build,
      timestamp: this.clock.now().toISOString(),
      checks: { database },
    };
  }
}
