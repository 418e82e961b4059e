import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { preparedSql, runPrepared } from '../../db/prepared.js';
import type { ToolSnapshot } from '../agent-versions/agent-configuration.js';
import type { Provider } from '../phone-numbers/phone-number.schemas.js';
import {
  SURROUNDINGS_COLUMNS,
  surroundingsBindings,
  type CallSurroundings,
} from '../simulation/simulation.repository.js';

export type RoutedNumber = {
  id: string;
  organization_id: string;
  number: string;
  label: string | null;
  provider: Provider | null;
  agent_id: string | null;
  /** Whether the number's agent runs an experiment: only then is a variant assigned (and stored). */
  experiment_running: boolean;
};

/** The agent whose configuration a call runs, as far as its reads need it. */
export type RoutedAgent = { id: string; organization_id: string; backup_agent_id?: string | null };

export type VersionRef = { id: string; version: number };

/**
 * The current configuration's version and its tools (as versions snapshot them, by name), and what
 * the call can reach (the simulator's surroundings), read together.
 */
export type CurrentConfiguration = { latest: VersionRef | null; tools: ToolSnapshot[]; surroundings: CallSurroundings };

export type StoredVersion = VersionRef & { configuration: Record<string, unknown> & { tools?: ToolSnapshot[] } };

const NUMBER_SQL = preparedSql(
  'route_number',
  `SELECT p.id, p.organization_id, p.number, p.label, p.provider, p.agent_id,
          EXISTS (SELECT 1 FROM experiments e WHERE e.agent_id = p.agent_id AND e.status = 'running')
            AS experiment_running
     FROM phone_numbers p WHERE p.number = :number`,
);

const CURRENT_SQL = preparedSql(
  'route_current_configuration',
  `SELECT ${SURROUNDINGS_COLUMNS},
     (SELECT json_build_object('id', v.id, 'version', v.version) FROM agent_versions v
       WHERE v.agent_id = :agent ORDER BY v.version DESC LIMIT 1) AS latest,
     (SELECT coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'display_name', t.display_name,
               'description', t.description, 'tool_type', t.tool_type, 'config', t.config,
               'is_enabled', t.is_enabled, 'priority', t.priority, 'employee_id', t.employee_id)
               ORDER BY t.name), '[]'::json)
        FROM tools t WHERE t.agent_id = :agent) AS tool_snapshots`,
);

/** The reads of the routing answer: a few prepared statements, the hot path of every call. */
export class RouteRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  async findNumber(number: string): Promise<RoutedNumber | undefined> {
    const { rows } = await runPrepared(this.db, NUMBER_SQL, { number });
    return rows[0] as RoutedNumber | undefined;
  }

  /** The agent's current configuration, its backup's state and the contacts of `phones`: one round trip. */
  async currentConfiguration(agent: RoutedAgent, phones: readonly string[]): Promise<CurrentConfiguration> {
    const bindings = surroundingsBindings(agent, agent.backup_agent_id ?? null, phones);
    const { rows } = await runPrepared(this.db, CURRENT_SQL, bindings);
    const { latest, tool_snapshots, ...surroundings } = rows[0] as CallSurroundings & {
      latest: VersionRef | null;
      tool_snapshots: ToolSnapshot[];
    };
    return { latest, tools: tool_snapshots, surroundings };
  }

  async version(agentId: string, versionId: string): Promise<StoredVersion | undefined> {
    return this.db('agent_versions')
      .where({ agent_id: agentId, id: versionId })
      .first('id', 'version', 'configuration');
  }
}
