import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { preparedSql, runPrepared } from '../../db/prepared.js';
import type { ToolSnapshot } from '../agent-versions/agent-configuration.js';
import type { Provider } from '../phone-numbers/phone-number.schemas.js';
import {
  CONFIGURATION_COLUMNS,
  NUMBERED_CONTACT_JSON,
  surroundingsBindings,
  type CallSurroundings,
  type NumberedContact,
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
 * An agent's current configuration version and its tools (as versions snapshot them, by name), and
 * what its calls can reach besides the callers (the simulator's surroundings without contacts): the
 * same for every call until one of them changes, so the routing answer keeps it (RouteReads).
 */
export type CurrentConfiguration = {
  latest: VersionRef | null;
  tools: ToolSnapshot[];
  surroundings: Omit<CallSurroundings, 'contacts'>;
};

/** A contact of one of the asked agents with the caller's number. */
export type AgentContact = NumberedContact & { agent_id: string };

export type StoredVersion = VersionRef & { configuration: Record<string, unknown> & { tools?: ToolSnapshot[] } };

/** A unique index: one row, many routes at once, so it goes over the pipelined connections. */
const NUMBER_SQL = preparedSql(
  'route_number',
  `SELECT p.id, p.organization_id, p.number, p.label, p.provider, p.agent_id,
          EXISTS (SELECT 1 FROM experiments e WHERE e.agent_id = p.agent_id AND e.status = 'running')
            AS experiment_running
     FROM phone_numbers p WHERE p.number = :number`,
  { pipelined: true },
);

const CURRENT_SQL = preparedSql(
  'route_current_configuration',
  `SELECT ${CONFIGURATION_COLUMNS},
     (SELECT json_build_object('id', v.id, 'version', v.version) FROM agent_versions v
       WHERE v.agent_id = :agent ORDER BY v.version DESC LIMIT 1) AS latest,
     (SELECT coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'display_name', t.display_name,
               'description', t.description, 'tool_type', t.tool_type, 'config', t.config,
               'is_enabled', t.is_enabled, 'priority', t.priority, 'employee_id', t.employee_id)
               ORDER BY t.name), '[]'::json)
        FROM tools t WHERE t.agent_id = :agent) AS tool_snapshots`,
);

/**
 * The caller's contacts of the agents that may answer (the dialled one and its backup), most
 * recently updated first as greetings pick them: the one read a routed call makes per caller. Index
 * lookups by agent and number, so it goes over the pipelined connections.
 */
const CONTACTS_SQL = preparedSql(
  'route_contacts',
  `SELECT c.agent_id, ${NUMBERED_CONTACT_JSON} AS contact FROM contacts c
    WHERE c.agent_id = ANY(:agents::uuid[]) AND c.organization_id = :organization
      AND (c.phone_number = :phone OR c.mobile_number = :phone OR c.landline_number = :phone)
    ORDER BY c.updated_at DESC, c.id`,
  { pipelined: true },
);

/** The reads of the routing answer: prepared statements, the hot path of every call. */
export class RouteRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  async findNumber(number: string): Promise<RoutedNumber | undefined> {
    const { rows } = await runPrepared(this.db, NUMBER_SQL, { number });
    return rows[0] as RoutedNumber | undefined;
  }

  /** The agent's current configuration and its backup's state: one round trip. */
  async currentConfiguration(agent: RoutedAgent): Promise<CurrentConfiguration> {
    const bindings = surroundingsBindings(agent, agent.backup_agent_id ?? null, []);
    const { rows } = await runPrepared(this.db, CURRENT_SQL, bindings);
    const { latest, tool_snapshots, ...surroundings } = rows[0] as Omit<CallSurroundings, 'contacts'> & {
      latest: VersionRef | null;
      tool_snapshots: ToolSnapshot[];
    };
    return { latest, tools: tool_snapshots, surroundings };
  }

  /** The contacts with number `phone` of `agents` (of one organization). */
  async contacts(organizationId: string, agents: readonly string[], phone: string): Promise<AgentContact[]> {
    const { rows } = await runPrepared(this.db, CONTACTS_SQL, {
      agents: [...agents],
      organization: organizationId,
      phone,
    });
    return (rows as { agent_id: string; contact: NumberedContact }[]).map((r) => ({
      ...r.contact,
      agent_id: r.agent_id,
    }));
  }

  async version(agentId: string, versionId: string): Promise<StoredVersion | undefined> {
    return this.db('agent_versions')
      .where({ agent_id: agentId, id: versionId })
      .first('id', 'version', 'configuration');
  }
}
