import { sharedRepresentation } from '../../api/entity-tag.js';
import { timestampOfJson } from '../../db/date-column.js';
import type { z } from '../../openapi/zod.js';
import type { Workflow } from '../workflows/workflow.schemas.js';
import { AgentSchema } from './agent.schemas.js';

/*
 * The agent read model: every form an agent takes on its way out, and the only place that maps the
 * columns of `agents` to the fields of an Agent. To add a computed field, change the schema and
 * `representationOf` here; the cached, the uncached and the PostgreSQL-built paths all follow.
 *
 *   AgentRow        a row as the repository reads it, column by column (timestamps as Dates)
 *   Agent           the API representation (the schema's fields in order, timestamps as ISO text)
 *   entry           a row the read cache shares between requests: frozen, with a slot that keeps its
 *                   representation, whose own slot keeps its bytes and ETag (`sharedRepresentation`)
 *   JSON read       the row as one JSON value built by PostgreSQL beside another read (the key
 *                   lookup, the test-case guard), its representation already built
 */

/** The Agent as the API returns it, timestamps as ISO 8601 text. */
export type Agent = z.output<typeof AgentSchema>;

/**
 * A row of `agents`: the Agent's fields, timestamps as the driver hands them over, and the workflow,
 * which has its own endpoints.
 */
export type AgentRow = Omit<Agent, 'created_at' | 'updated_at' | 'vacation_end'> & {
  created_at: Date;
  updated_at: Date;
  vacation_end: Date | null;
  workflow: Workflow | null;
  workflow_updated_at: Date | null;
};

/** The response fields: exactly those the Agent schema (and so the OpenAPI document) declares. */
const AGENT_FIELDS = Object.keys(AgentSchema.shape) as (keyof Agent)[];
/** Every column an AgentRow has; queries select these, never `*`. */
export const AGENT_COLUMNS: (keyof AgentRow)[] = [...AGENT_FIELDS, 'workflow', 'workflow_updated_at'];
/** The columns of AgentRow that are timestamps: JSON carries them as text, the driver as Dates. */
export const AGENT_TIMESTAMP_COLUMNS = ['vacation_end', 'workflow_updated_at', 'created_at', 'updated_at'] as const;

/** The timestamps among the Agent's fields (text in the representation, Dates in the row). */
const REPRESENTED_TIMESTAMPS = AGENT_TIMESTAMP_COLUMNS.filter((c): c is 'vacation_end' | 'created_at' | 'updated_at' =>
  (AGENT_FIELDS as string[]).includes(c),
);

/**
 * The slot of a row whose representation is kept with it: a cache entry (built on first use) or a
 * row read as JSON (built by PostgreSQL). Not enumerable, so the row's JSON and columns stay as they
 * are. A row read column by column for one request has none.
 */
const REPRESENTATION = Symbol('agent representation');
type Slot = { agent?: Agent };

function slotOf(row: Readonly<AgentRow>): Slot | undefined {
  return (row as { [REPRESENTATION]?: Slot })[REPRESENTATION];
}

/**
 * Picks the Agent's fields: a column the schema does not declare never reaches a response. The
 * timestamps become ISO 8601 text here, as `JSON.stringify` would write them: on Node 24 a document
 * holding Date objects takes its slow path and serialises much slower than the same document with
 * strings (`npm run bench -- chain` shows the difference).
 */
function representationOf(row: Readonly<AgentRow>): Agent {
  const agent: Record<string, unknown> = {};
  for (const field of AGENT_FIELDS) {
    const value = row[field];
    agent[field] = value instanceof Date ? value.toISOString() : value;
  }
  return agent as Agent;
}

/** A timestamp as `Date.prototype.toISOString` writes it (UTC, milliseconds, `Z`). */
const isoText = (column: string) => `to_char(a.${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The JSON value of `jsonSql`: the representation as PostgreSQL built it, and the workflow columns. */
type AgentJson = { representation: Agent; workflow: AgentRow['workflow']; workflow_updated_at: string | null };

/** An AgentRow kept by the read cache, or read in the same query as something else. */
export const AgentReads = {
  /**
   * The Agent of a row. A shared row (a cache entry) builds it once and keeps it, frozen and with
   * its encoded bytes and tag kept too after the first response; a row read as JSON brings it
   * built; a row read for this request alone gets a new one.
   */
  representation(row: Readonly<AgentRow>): Agent {
    const slot = slotOf(row);
    if (!slot) return representationOf(row);
    return (slot.agent ??= sharedRepresentation(representationOf(row)) as Agent);
  },

  /** A row as the read cache keeps it: frozen (every request shares it), with its slot. */
  entry(row: AgentRow): Readonly<AgentRow> {
    Object.defineProperty(row, REPRESENTATION, { value: {} });
    return Object.freeze(row);
  },

  /**
   * SQL for the agent `id` (an SQL expression) as one JSON value, or NULL: for a query that reads an
   * agent beside something else, where the driver would otherwise describe and parse 43 columns more
   * on every call. The value holds the Agent as the API shows it (its fields in order, timestamps
   * already ISO 8601 text, so nothing is converted and copied per request) and the workflow columns.
   */
  sql(id: string): string {
    const fields = AGENT_FIELDS.map((c) =>
      (REPRESENTED_TIMESTAMPS as string[]).includes(c) ? `${isoText(c)} AS ${c}` : `a.${c}`,
    );
    return `(SELECT json_build_object('representation', (SELECT to_json(r) FROM (SELECT ${fields.join(', ')}) r), 'workflow', a.workflow, 'workflow_updated_at', a.workflow_updated_at) FROM agents a WHERE a.id = ${id})`;
  },

  /**
   * The AgentRow of `sql`'s value (parsed), equal to the one read column by column; its
   * representation (as PostgreSQL built it) is kept in its slot, where `representation` finds it.
   */
  fromJson(json: Record<string, unknown>): AgentRow {
    const { representation, workflow, workflow_updated_at } = json as AgentJson;
    // A copy of a parsed object with fast properties: V8 clones it whole.
    const row = { ...representation } as Record<string, unknown>;
    for (const field of REPRESENTED_TIMESTAMPS) row[field] = timestampOfJson(representation[field]);
    row.workflow = workflow;
    row.workflow_updated_at = timestampOfJson(workflow_updated_at);
    Object.defineProperty(row, REPRESENTATION, { value: { agent: representation } satisfies Slot });
    return row as AgentRow;
  },
} as const;

/** What the read cache is handed (src/cache/read-cache.ts): an agent by id as a cache entry. */
export type AgentEntries = { findEntry(id: string): Promise<Readonly<AgentRow> | undefined> };

/**
 * The agents of `rows` (the repository's read whatever the organization; AgentAccess checks it right
 * after) as cache entries (`AgentReads.entry`), which the cache keeps without looking inside.
 */
export function agentEntries(rows: { findAnyById(id: string): Promise<AgentRow | undefined> }): AgentEntries {
  return {
    async findEntry(id) {
      const row = await rows.findAnyById(id);
      return row && AgentReads.entry(row);
    },
  };
}
