import type { Knex } from 'knex';

/**
 * A/B experiments between configuration versions of an agent, and the variant each routed call
 * was assigned (keyed by the telephony layer's call_id, so the call reported later carries it).
 * At most one running experiment per agent (partial unique index). `calls` counts assignments,
 * for `max_calls`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE experiments (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      name text NOT NULL,
      variants jsonb NOT NULL,
      sticky_by text NOT NULL CHECK (sticky_by IN ('call', 'caller_number')),
      status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'running', 'stopped', 'ended')),
      end_reason text NULL CHECK (end_reason IN ('stopped', 'ends_at', 'max_calls')),
      ends_at timestamptz NULL,
      max_calls integer NULL CHECK (max_calls > 0),
      calls integer NOT NULL DEFAULT 0,
      started_at timestamptz NULL,
      ended_at timestamptz NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX experiments_agent ON experiments (agent_id, created_at, id);
    CREATE UNIQUE INDEX experiments_one_running ON experiments (agent_id) WHERE status = 'running';

    CREATE TABLE experiment_assignments (
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      call_id text NOT NULL,
      experiment_id uuid NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
      variant text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (organization_id, call_id)
    );
    CREATE INDEX experiment_assignments_experiment ON experiment_assignments (experiment_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE experiment_assignments;
    DROP TABLE experiments;
  `);
}
