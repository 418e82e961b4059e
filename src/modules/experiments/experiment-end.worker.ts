import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { inTransaction, type Db } from '../../db/knex.js';
import type { EventRecorder, NewEvent } from '../../events/event-recorder.js';
import { EXPERIMENT_END_QUEUE } from '../../jobs/queue-definitions.js';
import type { JobQueue } from '../../jobs/queue.js';
import { inBatches, ScheduledWorker } from '../../jobs/scheduled-worker.js';
import { toExperiment, type ExperimentRepository, type ExperimentRow } from './experiment.repository.js';

const BATCH_SIZE = 100;

/** The event of an experiment's change, with the experiment as it is after it. */
export function experimentEvent(
  type: 'experiment.created' | 'experiment.started' | 'experiment.stopped' | 'experiment.ended',
  row: ExperimentRow,
  at: Date,
): NewEvent {
  return {
    organization_id: row.organization_id,
    agent_id: row.agent_id,
    type,
    payload: { experiment: toExperiment(row), changed_at: at.toISOString() },
  };
}

/**
 * Ends running experiments whose `ends_at` passed or whose `max_calls` is reached, each with its
 * `experiment.ended` event in the same transaction. Three paths take it: the scheduled pass, the
 * route answer right after it assigned the last call, and a read of the agent's experiments (so an
 * answer never shows an experiment running past its end). The update re-checks every locked row,
 * so however many of them race, an experiment ends once and its event is recorded once.
 */
export class ExperimentEnding {
  constructor(
    private readonly db: Db,
    private readonly experiments: ExperimentRepository,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** What is due at `at` of one agent, or up to `limit` of any organization; returns how many ended. */
  async endDue(scope: { agentId: string } | { limit: number }, at: Date): Promise<number> {
    return inTransaction(this.db, async (trx) => {
      const ended = await this.experiments.with(trx).endDue(scope, at);
      for (const row of ended) await this.events.record(trx, experimentEvent('experiment.ended', row, at));
      return ended.length;
    });
  }

  /** One scheduled pass over every organization, at the clock's now; tests call it directly. */
  async run(): Promise<number> {
    const now = this.clock.now();
    const total = await inBatches(BATCH_SIZE, (limit) => this.endDue({ limit }, now));
    if (total > 0) this.logger.info({ experiments: total }, 'experiments ended at ends_at or max_calls');
    return total;
  }
}

/** Runs the pass every minute through a pg-boss schedule (one instance takes each run). */
export class ExperimentEndWorker extends ScheduledWorker<number> {
  constructor(queue: JobQueue, ending: ExperimentEnding) {
    super('experiment-end', queue, { queue: EXPERIMENT_END_QUEUE, cron: '* * * * *' }, () => ending.run());
  }
}
