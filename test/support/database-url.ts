import { createDb, type Db } from '../../src/db/knex.js';

/** The same server, another database. */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * A pool for the suite's own database administration (creating, cloning and dropping databases),
 * without the silence watchdog: CREATE DATABASE ... TEMPLATE copies the whole template and may take
 * seconds on a busy machine, and the watchdog's probe (a fresh connection that must answer within
 * its deadline) then judged the server unreachable and cut the statement. The product's request
 * queries keep the watchdog; these statements are not requests.
 */
export function createAdminDb(url: string, poolMax = 1): Db {
  return createDb(url, poolMax, undefined, { silenceMs: 0 });
}
