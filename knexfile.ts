// For the knex CLI (`npx knex --knexfile knexfile.ts ...`) against DATABASE_URL. The npm scripts
// (`npm run migrate`, ...) go through src/cli.ts, which also handles the embedded database.
import { parseConfig } from './src/config.js';
import { migrationConfig } from './src/db/knex.js';

const config = parseConfig(process.env);
if (!config.DATABASE_URL)
  throw new Error('knexfile.ts needs DATABASE_URL; use `npm run migrate` for the embedded database');

export default {
  client: 'pg',
  connection: config.DATABASE_URL,
  pool: { min: 0, max: config.DATABASE_POOL_MAX },
  migrations: migrationConfig,
};
