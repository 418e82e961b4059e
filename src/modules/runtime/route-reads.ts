import type { CacheRegion } from '../../cache/read-cache.js';
import type {
  AgentContact,
  CurrentConfiguration,
  RoutedAgent,
  RoutedNumber,
  RouteRepository,
} from './route.repository.js';

/**
 * The tables whose rows the kept entries are made of; each announces its changes on the read
 * cache's channel with its name (migration notify_route_changes). Agents announce theirs too, and
 * an agent change drops the whole cache, these entries with it.
 */
export const ROUTE_TABLES = [
  'phone_numbers',
  'experiments',
  'employees',
  'forwarding_slots',
  'tools',
  'agent_versions',
];

/** Where kept entries live: the read cache (src/cache/read-cache.ts). */
export type RouteCache = { region<T>(tables: readonly string[]): CacheRegion<T> };

/**
 * What the routing answer reads, kept in memory by the read cache: a number with its agent and
 * whether an experiment runs, and an agent's current configuration (latest version, tools, backup,
 * employees, forwarding slots). The same for every call until a change is announced, so a routed
 * call reads only what is its own: the caller's contacts. Kept entries are shared by every request:
 * frozen, never changed. While the cache does not hear the channel (or is off) every read goes to
 * the database.
 */
export class RouteReads {
  private readonly numbers: CacheRegion<Readonly<RoutedNumber & { agent_id: string }>>;
  private readonly configurations: CacheRegion<Readonly<CurrentConfiguration>>;

  constructor(
    private readonly repository: RouteRepository,
    cache: RouteCache,
  ) {
    this.numbers = cache.region(ROUTE_TABLES);
    this.configurations = cache.region(ROUTE_TABLES);
  }

  /**
   * The number (E.164) with its agent; undefined when it is not registered or has no agent. Those
   * are not kept: a new agent may take over a free number in a write that announces no agent change.
   */
  number(number: string): Promise<Readonly<RoutedNumber & { agent_id: string }> | undefined> {
    return this.numbers.read(number, async () => {
      const row = await this.repository.findNumber(number);
      return row && row.agent_id !== null ? Object.freeze({ ...row, agent_id: row.agent_id }) : undefined;
    });
  }

  /** The current configuration of `agent` (keyed by its id: a change of the agent drops it). */
  configuration(agent: RoutedAgent): Promise<Readonly<CurrentConfiguration>> {
    return this.configurations.read(agent.id, async () => {
      const read = await this.repository.currentConfiguration(agent);
      const { surroundings } = read;
      for (const list of [read.tools, surroundings.employees, surroundings.slots, surroundings.tools])
        Object.freeze(list);
      Object.freeze(surroundings);
      return Object.freeze(read);
    }) as Promise<Readonly<CurrentConfiguration>>;
  }

  /** The contacts with the caller's number of the agents that may answer: read for every call. */
  contacts(organizationId: string, agents: readonly string[], phone: string): Promise<AgentContact[]> {
    return this.repository.contacts(organizationId, agents, phone);
  }

  version(agentId: string, versionId: string) {
    return this.repository.version(agentId, versionId);
  }
}
