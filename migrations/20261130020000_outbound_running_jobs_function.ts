import type { Knex } from 'knex';

/**
 * The jobs in progress of some agents, per agent and campaign, counted on a snapshot of their own:
 * a claim is one statement (`npm run bench -- outbound`) that takes its agents' dispatch locks and
 * then counts their running jobs to keep `max_concurrent` and the per-agent limit. A statement reads
 * on the snapshot of its start, which a claim that waited for a lock would take from before the
 * commit of the claim it waited for; a VOLATILE PL/pgSQL function takes a new snapshot for each of
 * its queries and is never inlined. `after` is not read: passing the count of locks taken makes
 * PostgreSQL take them before it calls the function.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE FUNCTION outbound_running_jobs(agent_ids uuid[], after bigint)
    RETURNS TABLE (agent_id uuid, campaign_id uuid, n int) LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      RETURN QUERY SELECT j.agent_id, j.campaign_id, count(*)::int FROM outbound_jobs j
        WHERE j.agent_id = ANY(agent_ids) AND j.status = 'in_progress'
        GROUP BY j.agent_id, j.campaign_id;
    END $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION outbound_running_jobs(uuid[], bigint)');
}
