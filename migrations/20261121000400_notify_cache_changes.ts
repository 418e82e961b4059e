import type { Knex } from 'knex';

/**
 * Every change to a row that the per-instance read cache holds (a key, a membership, a user, an
 * agent) is announced on the `vam_cache` channel when it commits, whoever makes it (the API, the
 * CLI, plain SQL). Each instance listens and drops its cache.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION notify_cache_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- Bookkeeping writes (last_used_at) change nothing a request depends on.
      IF TG_TABLE_NAME = 'api_keys' AND TG_OP = 'UPDATE'
         AND (to_jsonb(NEW) - 'last_used_at' - 'updated_at') = (to_jsonb(OLD) - 'last_used_at' - 'updated_at') THEN
        RETURN NULL;
      END IF;
      PERFORM pg_notify('vam_cache', TG_TABLE_NAME);
      RETURN NULL;
    END $$;
    CREATE TRIGGER api_keys_notify AFTER UPDATE OR DELETE ON api_keys
      FOR EACH ROW EXECUTE FUNCTION notify_cache_change();
    CREATE TRIGGER memberships_notify AFTER INSERT OR UPDATE OR DELETE ON memberships
      FOR EACH ROW EXECUTE FUNCTION notify_cache_change();
    CREATE TRIGGER users_notify AFTER DELETE ON users
      FOR EACH ROW EXECUTE FUNCTION notify_cache_change();
    CREATE TRIGGER agents_notify AFTER UPDATE OR DELETE ON agents
      FOR EACH ROW EXECUTE FUNCTION notify_cache_change();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER agents_notify ON agents;
    DROP TRIGGER users_notify ON users;
    DROP TRIGGER memberships_notify ON memberships;
    DROP TRIGGER api_keys_notify ON api_keys;
    DROP FUNCTION notify_cache_change();
  `);
}
