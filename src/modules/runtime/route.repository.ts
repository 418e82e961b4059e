import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { preparedSql, runPrepared } from '../../db/prepared.js';
import type { ToolSnapshot } from '../agent-versions/agent-configuration.js';
import type { Provider } from '../phone-numbers/phone-number.schemas.js';

export type RoutedNumber = {
  id: string;
  organization_id: string;
  number: string;
  label: string | null;
  provider: Provider | null;
  agent_id: string | null;
};

export type VersionRef = { id: string; version: number };

/** The current configuration's version and its tools (as versions snapshot them, by name). */
export type CurrentConfiguration = { latest: VersionRef | null; tools: ToolSnapshot[] };

export type StoredVersion = VersionRef & { configuration: Record<string, unknown> & { tools?: ToolSnapshot[] } };

const NUMBER_SQL = preparedSql(
  'route_number',
  `SELECT id, organization_id, number, label, provider, agent_id FROM phone_numbers WHERE number = :number`,
);

const CURRENT_SQL = preparedSql(
  'route_current_configuration',
  `SELECT
     (SELECT json_build_object('id', v.id, 'version', v.version) FROM agent_versions v
       WHERE v.agent_id = :agent ORDER BY v.version DESC LIMIT 1) AS latest,
     (SELECT coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'display_name', t.display_name,
               'description', t.description, 'tool_type', t.tool_type, 'config', t.config,
               'is_enabled', t.is_enabled, 'priority', t.priority, 'employee_id', t.employee_id)
               ORDER BY t.name), '[]'::json)
        FROM tools t WHERE t.agent_id = :agent) AS tools`,
);

/** The reads of the routing answer: a few prepared statements, the hot path of every call. */
export class RouteRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  async findNumber(number: string): Promise<RoutedNumber | undefined> {
    const { rows } = await runPrepared(this.db, NUMBER_SQL, { number });
    return rows[0] as RoutedNumber | undefined;
  }

  async currentConfiguration(agentId: string): Promise<CurrentConfiguration> {
    const { rows } = await runPrepared(this.db, CURRENT_SQL, { agent: agentId });
    return rows[0] as CurrentConfiguration;
  }

  async version(agentId: string, versionId: string): Promise<StoredVersion | undefined> {
    return this.db('agent_versions')
      .where({ agent_id: agentId, id: versionId })
      .first('id', 'version', 'configuration');
  }
}
