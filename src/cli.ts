import { parseArgs } from 'node:util';
import knexFactory from 'knex';
import { z } from 'zod';
import { PERMISSIONS, ROLES, type Permission } from './auth/permissions.js';
import { signDashboardToken } from './auth/token.js';
import { parseConfig } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrationConfig, migrationsDirectory } from './db/knex.js';
import { createLogger } from './logger.js';
import { loadDotEnv } from './env-file.js';
import { NEW_AGENT_DEFAULTS } from './db/agent-defaults.js';
import { bootstrap, credentials, shellExports } from './ops/bootstrap.js';
import { withJwtSecret, withSecretsKey } from './ops/dev-secret.js';
import { OpsRepository } from './ops/ops.repository.js';
import { explainSetupError, setupStep } from './setup-error.js';
import { agentCommand } from './cli-agent.js';

const USAGE = `Usage: npm run cli -- <command> [options]       (npm run cli -- --help: this list)

  migrate                      apply pending migrations
  migrate:rollback             undo the last batch of migrations
  migrate:make <name>          create migrations/<timestamp>_<name>.ts
  bootstrap [--org NAME] [--email EMAIL]
                               organization + developer_admin + demo agent + token + API key (JSON)
  credentials [--new-key] [--env] [--org ORG_ID]
                               a fresh dashboard token for the demo organization (the oldest one, or
                               --org); --new-key also creates a new API key (600/min, 10,000/h);
                               --env prints export lines for BASE, KEY, TOKEN and AGENT instead of JSON
  org:create --name NAME
  user:create --email EMAIL --name NAME
  member:add --user USER_ID --org ORG_ID --role developer_admin|admin|member
  token --user USER_ID [--ttl SECONDS]
                               mint a dashboard login token (HS256 with JWT_SECRET)
  key:create --org ORG_ID --user USER_ID [--name NAME] [--permissions a:read,b:write]
             [--agents ID,ID] [--per-minute N] [--per-hour N] [--expires ISO_DATE]
  agent:create --org ORG_ID --name NAME --phone +49...
  agent pull <agentId> <dir> | agent diff <dir> | agent push <dir>
                               an agent as YAML files through the HTTP API (VAM_BASE_URL, VAM_API_KEY;
                               docs/agents-as-code.md)

Every command prints JSON. Without DATABASE_URL the embedded PostgreSQL under DATA_DIR is used
(joined if the server is running). A .env file in the working directory is read first; variables
set in the environment win over it.`;

const uuid = z.uuid();
const list = (value: string | undefined) =>
  value
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new Error(`--${name} is required`);
  return value;
}

function requiredUuid(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = required(values, name);
  if (!uuid.safeParse(value).success) throw new Error(`--${name} must be a UUID`);
  return value;
}

async function run(
  command: string,
  positionals: string[],
  values: Record<string, string | boolean | undefined>,
  database: Database,
) {
  const config = withSecretsKey(withJwtSecret(parseConfig(process.env)));
  const ops = new OpsRepository(database.db);
  switch (command) {
    case 'migrate': {
      const [batch, applied] = await database.db.migrate.latest(migrationConfig);
      return { batch, applied };
    }
    case 'migrate:rollback': {
      const [batch, reverted] = await database.db.migrate.rollback(migrationConfig);
      return { batch, reverted };
    }
    case 'bootstrap':
      await database.db.migrate.latest(migrationConfig);
      return bootstrap(database.db, config, {
        organizationName: values.org as string | undefined,
        email: values.email as string | undefined,
      });
    case 'credentials': {
      const result = await credentials(database.db, config, {
        organizationId: values.org === undefined ? undefined : requiredUuid(values, 'org'),
        newKey: values['new-key'] === true,
      });
      if (values.env !== true) return result;
      return shellExports(`http://localhost:${config.PORT}`, {
        apiKey: result.api_key,
        token: result.dashboard_token,
        agentId: result.agent?.id,
      });
    }
    case 'org:create':
      return ops.createOrganization(required(values, 'name'));
    case 'user:create':
      return ops.createUser(required(values, 'email'), required(values, 'name'));
    case 'member:add': {
      const role = z.enum(ROLES).parse(required(values, 'role'));
      await ops.addMember(requiredUuid(values, 'user'), requiredUuid(values, 'org'), role);
      return { user_id: values.user, organization_id: values.org, role };
    }
    case 'token': {
      const ttl = values.ttl ? Number(values.ttl) : 12 * 3600;
      return { token: signDashboardToken(config, requiredUuid(values, 'user'), ttl), expires_in: ttl };
    }
    case 'key:create': {
      const permissions = list(values.permissions as string | undefined) ?? [...PERMISSIONS];
      const unknown = permissions.filter((p) => !(PERMISSIONS as readonly string[]).includes(p));
      if (unknown.length > 0) throw new Error(`Unknown permissions: ${unknown.join(', ')}`);
      const created = await ops.createApiKey({
        organizationId: requiredUuid(values, 'org'),
        userId: requiredUuid(values, 'user'),
        name: (values.name as string | undefined) ?? 'cli key',
        permissions: permissions as Permission[],
        allowedAgentIds: list(values.agents as string | undefined) ?? null,
        rateLimitPerMinute: values['per-minute'] ? Number(values['per-minute']) : undefined,
        rateLimitPerHour: values['per-hour'] ? Number(values['per-hour']) : undefined,
        expiresAt: values.expires ? new Date(values.expires as string) : null,
      });
      return { id: created.id, key: created.key };
    }
    case 'agent:create':
      return ops.createAgent(requiredUuid(values, 'org'), {
        ...NEW_AGENT_DEFAULTS,
        name: required(values, 'name'),
        phone_number: required(values, 'phone'),
      });
    default:
      throw new Error(`Unknown command "${command}"\n\n${USAGE}`);
  }
}

async function main(): Promise<void> {
  loadDotEnv();
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      help: { type: 'boolean' as const, short: 'h' },
      'new-key': { type: 'boolean' as const },
      env: { type: 'boolean' as const },
      ...Object.fromEntries(
        [
          'org',
          'email',
          'name',
          'user',
          'role',
          'ttl',
          'permissions',
          'agents',
          'per-minute',
          'per-hour',
          'expires',
          'phone',
        ].map((o) => [o, { type: 'string' as const }]),
      ),
    },
  });
  const [command, ...rest] = positionals;
  if (!command || command === 'help' || values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === 'agent') {
    const result = await agentCommand(rest);
    process.stdout.write(typeof result === 'string' ? result : `${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  if (command === 'migrate:make') {
    if (!rest[0]) throw new Error('migrate:make needs a name, e.g. create_widgets');
    const file = await knexFactory({ client: 'pg' }).migrate.make(rest[0], {
      directory: migrationsDirectory,
      extension: 'ts',
    });
    process.stdout.write(`${JSON.stringify({ created: file })}\n`);
    return;
  }
  const config = await setupStep('config', undefined, () => parseConfig(process.env));
  const database = await setupStep('database', config.DATABASE_URL, () =>
    openDatabase(config, createLogger({ LOG_LEVEL: 'error' })),
  );
  try {
    const result = await run(command, rest, values, database);
    process.stdout.write(typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await database.close();
  }
}

main().catch((error) => {
  const code = (error as { code?: string }).code;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    process.stderr.write(`${(error as Error).message}\nnpm run cli -- --help lists the commands and their options.\n`);
  } else {
    // The database is first reached by the command itself: its connection errors are explained here.
    const explained = explainSetupError(error, 'database', process.env.DATABASE_URL);
    process.stderr.write(`${explained instanceof Error ? explained.message : String(explained)}\n`);
  }
  process.exit(1);
});
