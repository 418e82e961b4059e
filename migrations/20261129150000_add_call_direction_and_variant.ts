import type { Knex } from 'knex';

/**
 * Where a call came from: `direction` (inbound unless reported with the outbound call job it
 * answers, `outbound_call_id`), and the experiment variant the routing answer assigned to its
 * call_id (`experiment_id`, `variant`). On the partitioned parent, so every month gets them;
 * existing calls are inbound and carry neither. No foreign keys: jobs and experiments are deleted
 * only with their agent, whose calls go with it, and the intake checks both ids.
 *
 * The experiment index is partial (only calls of an experiment): it serves an experiment's calls
 * without weighing on the calls that have none.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE calls
      ADD COLUMN direction text NOT NULL DEFAULT 'inbound' CHECK (direction IN ('inbound', 'outbound')),
      ADD COLUMN outbound_call_id uuid NULL,
      ADD COLUMN experiment_id uuid NULL,
      ADD COLUMN variant text NULL;
    CREATE INDEX calls_experiment ON calls (experiment_id, variant) WHERE experiment_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX calls_experiment;
    ALTER TABLE calls DROP COLUMN variant, DROP COLUMN experiment_id, DROP COLUMN outbound_call_id, DROP COLUMN direction;
  `);
}
