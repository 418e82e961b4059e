import { timestampOfJson } from '../db/date-column.js';
import type { Db } from '../db/knex.js';
import { preparedSql, runPrepared, type PreparedSql } from '../db/prepared.js';
import type { AgentRef } from './auth-context.js';
import { compileAllowList, type IpAllowList } from './ip-allow-list.js';
import type { Role } from './permissions.js';

export type ApiKeyCredential = {
  id: string;
  created_by: string;
  permissions: string[];
  allowed_agent_ids: string[] | null;
  /** `allowed_ips` parsed once when the key is loaded (null = any address). */
  allowed_ips: IpAllowList | null;
  rate_limit_per_minute: number;
  rate_limit_per_hour: number;
  /** The counters the key spends from: the first key of its rotation chain (its own id if none). */
  rate_limit_budget_id: string;
  is_active: boolean;
  expires_at: Date | null;
  last_used_at: Date | null;
  /**
   * The creator's role in each organization they are a member of right now: the key reaches those
   * organizations and holds there only what that role holds too (src/auth/access.ts).
   */
  creator_roles: Readonly<Record<string, Role>>;
};

/** A use of a key to record as `last_used_at`. */
export type KeyUse = { id: string; at: Date };

/** A key and the agent its request is about, read in one round trip. */
export type ApiKeyWithAgent<A extends AgentRef = AgentRef> = { key: ApiKeyCredential; agent: A | undefined };

/**
 * How the agents module reads its row beside something else: SQL for the agent `id` (an SQL
 * expression) as one JSON value, and the row from that value (`AgentReads`,
 * src/modules/agents/agent-reads.ts). Handed in by the container, so that authentication does not
 * depend on the agents module.
 */
export type AgentJsonReader<A extends AgentRef> = {
  sql(id: string): string;
  fromJson(json: Record<string, unknown>): A;
};

/** What a key allows its bearer: authentication reads these, and the key API shows them. */
export const KEY_GRANT_COLUMNS = [
  'permissions',
  'allowed_agent_ids',
  'allowed_ips',
  'rate_limit_per_minute',
  'rate_limit_per_hour',
  'is_active',
] as const;

const KEY_COLUMNS = ['id', 'created_by', ...KEY_GRANT_COLUMNS, 'expires_at', 'last_used_at'] as const;
/** The creator's role per organization (`{orgId: role}`), beside the key's own columns. */
const CREATOR_ROLES = `coalesce((SELECT json_object_agg(m.organization_id, m.role) FROM memberships m WHERE m.user_id = k.created_by), '{}'::json)`;

/** A key of a rotation chain spends from its first key's counters. */
const BUDGET_ID = 'coalesce(k.rate_limit_budget_id, k.id)';

/**
 * The key, its budget and its creator's roles as one JSON value: the driver parses it with
 * `JSON.parse`, where 12 columns with four arrays went through its per-column parsers (its array
 * parser reads character by character) and their descriptions were rebuilt on every result.
 */
const KEY_JSON = `json_build_object(${KEY_COLUMNS.map((c) => `'${c}', k.${c}`).join(', ')}, 'rate_limit_budget_id', ${BUDGET_ID}, 'creator_roles', ${CREATOR_ROLES}) AS key`;

/** The key and its creator's roles: the one query behind every key check the cache does not answer. */
const KEY_SQL = preparedSql('api_key', `SELECT ${KEY_JSON} FROM api_keys k WHERE k.key_hash = ? LIMIT 1`, {
  pipelined: true,
});

/** The same and, as one JSON value, the agent its request is about (see `AgentJsonReader`). */
function keyWithAgentSql(agentJsonSql: (id: string) => string): PreparedSql {
  return preparedSql(
    'api_key_with_agent',
    `SELECT ${KEY_JSON}, ${agentJsonSql('?::uuid')} AS agent FROM api_keys k WHERE k.key_hash = ? LIMIT 1`,
    { pipelined: true },
  );
}

/** The key's JSON value: timestamps as text, everything else as the credential has it. */
type KeyJson = Omit<ApiKeyCredential, 'allowed_ips' | 'expires_at' | 'last_used_at'> & {
  allowed_ips: string[] | null;
  expires_at: string | null;
  last_used_at: string | null;
};

type KeyRow = { key: KeyJson; agent?: Record<string, unknown> | null };

/** Field by field, so every credential has one shape. */
function toCredential(key: KeyJson): ApiKeyCredential {
  return {
    id: key.id,
    created_by: key.created_by,
    permissions: key.permissions,
    allowed_agent_ids: key.allowed_agent_ids,
    allowed_ips: compileAllowList(key.allowed_ips),
    rate_limit_per_minute: key.rate_limit_per_minute,
    rate_limit_per_hour: key.rate_limit_per_hour,
    rate_limit_budget_id: key.rate_limit_budget_id,
    is_active: key.is_active,
    expires_at: timestampOfJson(key.expires_at),
    last_used_at: timestampOfJson(key.last_used_at),
    creator_roles: key.creator_roles,
  };
}

export type UserCredential = { id: string; memberships: { organization_id: string; role: Role }[] };

/**
 * The lookups behind authentication, one round trip each. ReadCache (src/cache/read-cache.ts) keeps
 * their results and drops them on every announced change, so a revocation still counts at once.
 */
export class CredentialsRepository<A extends AgentRef = AgentRef> {
  private readonly keyWithAgent: PreparedSql;

  constructor(
    private readonly db: Db,
    private readonly agentJson: AgentJsonReader<A>,
  ) {
    this.keyWithAgent = keyWithAgentSql(agentJson.sql);
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyCredential | undefined> {
    const { rows } = await runPrepared(this.db, KEY_SQL, [hash]);
    const row = (rows as KeyRow[])[0];
    return row && toCredential(row.key);
  }

  /**
   * The key, its creator's roles and the agent `agentId` (whatever its organization; the
   * caller checks reach) in one query: the path of every agent request when nothing is cached.
   */
  async findApiKeyWithAgent(hash: string, agentId: string): Promise<ApiKeyWithAgent<A> | undefined> {
    // Fixed text, prepared: on the hot path, building and planning the query cost more than running it.
    const { rows } = await runPrepared(this.db, this.keyWithAgent, [agentId, hash]);
    const row = (rows as KeyRow[])[0];
    if (!row) return undefined;
    return { key: toCredential(row.key), agent: row.agent ? this.agentJson.fromJson(row.agent) : undefined };
  }

  async findUser(userId: string): Promise<UserCredential | undefined> {
    const rows: { id: string; organization_id: string | null; role: Role | null }[] = await this.db('users as u')
      .leftJoin('memberships as m', 'm.user_id', 'u.id')
      .where('u.id', userId)
      .select('u.id', 'm.organization_id', 'm.role');
    if (rows.length === 0) return undefined;
    return {
      id: userId,
      memberships: rows.flatMap((r) =>
        r.organization_id && r.role ? [{ organization_id: r.organization_id, role: r.role }] : [],
      ),
    };
  }

  /**
   * `last_used_at` of a batch of keys in one statement. Conditional, so that several instances
   * together still write a key at most about once a minute.
   */
  async touchApiKeys(uses: readonly KeyUse[]): Promise<void> {
    if (uses.length === 0) return;
    await this.db.raw(
      `UPDATE api_keys k SET last_used_at = u.at
         FROM jsonb_to_recordset(?::jsonb) AS u(id uuid, at timestamptz)
        WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at - interval '60 seconds')`,
      [JSON.stringify(uses)],
    );
  }
}
