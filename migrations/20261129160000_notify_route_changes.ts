import type { Knex } from 'knex';

/**
 * The routing answer (POST /v1/runtime/route) keeps, besides the agents of the read cache, the
 * dialled numbers and each agent's configuration surroundings (latest version, tools, employees,
 * forwarding slots, whether an experiment runs) in memory per instance. Every change to those rows
 * is announced on the read cache's channel at commit with the table's name, whoever makes it; an
 * instance then drops those entries alone (src/cache/read-cache.ts, CacheRegion). An experiment
 * announces only a change of its status or agent: the counter a routed call raises changes nothing
 * the answer keeps.
 */
const TABLES = ['phone_numbers', 'employees', 'forwarding_slots', 'tools', 'agent_versions'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION notify_route_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('vam_cache', TG_TABLE_NAME);
      RETURN NULL;
    END $$;
  `);
  for (const table of TABLES) {
    await knex.raw(
      `CREATE TRIGGER ${table}_notify AFTER INSERT OR UPDATE OR DELETE ON ${table}
         FOR EACH ROW EXECUTE FUNCTION notify_route_change()`,
    );
  }
  await knex.raw(`
    CREATE TRIGGER experiments_notify_insert_delete AFTER INSERT OR DELETE ON experiments
      FOR EACH ROW EXECUTE FUNCTION notify_route_change();
    CREATE TRIGGER experiments_notify_update AFTER UPDATE ON experiments
      FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.agent_id IS DISTINCT FROM NEW.agent_id)
      EXECUTE FUNCTION notify_route_change();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER experiments_notify_update ON experiments');
  await knex.raw('DROP TRIGGER experiments_notify_insert_delete ON experiments');
  for (const table of TABLES) await knex.raw(`DROP TRIGGER ${table}_notify ON ${table}`);
  await knex.raw('DROP FUNCTION notify_route_change()');
}
