import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { paginate, type Page, type PageParams } from '../../api/pagination.js';
import { preparedSql, runPrepared } from '../../db/prepared.js';
import type { Experiment, ExperimentVariant } from './experiment.schemas.js';

export type ExperimentRow = {
  id: string;
  organization_id: string;
  agent_id: string;
  name: string;
  variants: ExperimentVariant[];
  sticky_by: 'call' | 'caller_number';
  status: Experiment['status'];
  end_reason: Experiment['end_reason'];
  ends_at: Date | null;
  max_calls: number | null;
  calls: number;
  started_at: Date | null;
  ended_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

/**
 * One row of the results query: a variant's reported calls (`field` null), or those of its calls
 * whose outcome `field` holds `value` (as text, as `->>` gives it). Each row carries the same three
 * figures.
 */
export type VariantResultRow = {
  variant: string;
  field: string | null;
  value: string | null;
  calls: number;
  done: number;
  duration_total: number;
};

export const ONE_RUNNING = 'experiments_one_running';

const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());

export function toExperiment(row: ExperimentRow): Experiment {
  return {
    id: row.id,
    agent_id: row.agent_id,
    name: row.name,
    status: row.status,
    end_reason: row.end_reason,
    sticky_by: row.sticky_by,
    variants: row.variants,
    ends_at: iso(row.ends_at),
    max_calls: row.max_calls,
    calls: row.calls,
    started_at: iso(row.started_at),
    ended_at: iso(row.ended_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

const RUNNING_SQL = preparedSql(
  'experiment_running',
  `SELECT id, name, variants, sticky_by, ends_at, max_calls, calls FROM experiments
    WHERE agent_id = :agent AND status = 'running'`,
);

/**
 * The call's assignment, once: counts the call while the experiment runs and has room under
 * `max_calls`. `last_call` says that this call was the last one it takes: the caller then ends the
 * experiment (with its event), and a crash before that is caught by the scheduled end pass.
 */
const ASSIGN_SQL = preparedSql(
  'experiment_assign',
  `WITH bump AS (
     UPDATE experiments SET calls = calls + 1, updated_at = :at
      WHERE id = :experiment AND status = 'running' AND (max_calls IS NULL OR calls < max_calls)
        AND NOT EXISTS (SELECT 1 FROM experiment_assignments a
                         WHERE a.organization_id = :organization AND a.call_id = :call)
      RETURNING id, calls >= max_calls AS last_call),
   stored AS (
     INSERT INTO experiment_assignments (organization_id, call_id, experiment_id, variant, created_at)
     SELECT :organization, :call, id, :variant, :at FROM bump
     ON CONFLICT (organization_id, call_id) DO NOTHING
     RETURNING variant)
   SELECT stored.variant, coalesce((SELECT last_call FROM bump), false) AS last_call FROM stored`,
);

const ASSIGNED_SQL = preparedSql(
  'experiment_assigned',
  `SELECT a.experiment_id, a.variant, e.name FROM experiment_assignments a JOIN experiments e ON e.id = a.experiment_id
    WHERE a.organization_id = :organization AND a.call_id = :call`,
);

export type RunningExperiment = Pick<
  ExperimentRow,
  'id' | 'name' | 'variants' | 'sticky_by' | 'ends_at' | 'max_calls' | 'calls'
>;

export class ExperimentRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  with(trx: Knex.Transaction): ExperimentRepository {
    return new ExperimentRepository(trx);
  }

  async list(agentId: string, page: PageParams): Promise<Page<Experiment>> {
    return paginate<ExperimentRow, Experiment>(
      this.db('experiments').where({ agent_id: agentId }).select('*'),
      page,
      [
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ],
      toExperiment,
    );
  }

  async find(agentId: string, id: string): Promise<ExperimentRow | undefined> {
    return this.db('experiments').where({ agent_id: agentId, id }).first();
  }

  async findForUpdate(agentId: string, id: string): Promise<ExperimentRow | undefined> {
    return this.db('experiments').where({ agent_id: agentId, id }).forUpdate().first();
  }

  async insert(row: Omit<ExperimentRow, 'id' | 'calls' | 'status' | 'end_reason' | 'started_at' | 'ended_at'>) {
    const [created] = await this.db('experiments')
      .insert({ ...row, variants: JSON.stringify(row.variants) })
      .returning('*');
    return created as ExperimentRow;
  }

  async update(id: string, changes: Partial<ExperimentRow>): Promise<ExperimentRow> {
    const [row] = await this.db('experiments').where({ id }).update(changes).returning('*');
    return row as ExperimentRow;
  }

  /**
   * Ends running experiments that are due at `at`: `ends_at` passed (ended then) or `max_calls`
   * reached (ended at `at`); of one agent, or at most `limit` of any organization. Returns the ended
   * rows. The conditions are checked again on each locked row, so of two transactions ending the
   * same experiment only one gets it back: call it on `with(trx)` and record the event there.
   */
  async endDue(scope: { agentId: string } | { limit: number }, at: Date): Promise<ExperimentRow[]> {
    const due = (query: Knex.QueryBuilder) =>
      query.where({ status: 'running' }).where((q) => q.where('ends_at', '<=', at).orWhereRaw('calls >= max_calls'));
    const update = due(this.db('experiments'));
    if ('agentId' in scope) update.where({ agent_id: scope.agentId });
    // Rows another pass holds are skipped (it ends them): concurrent passes never wait on each other.
    else
      update.whereIn(
        'id',
        due(this.db('experiments')).orderBy('id').limit(scope.limit).forUpdate().skipLocked().select('id'),
      );
    const full = this.db.raw('max_calls IS NOT NULL AND calls >= max_calls');
    return update
      .update({
        status: 'ended',
        end_reason: this.db.raw(`CASE WHEN ? THEN 'max_calls' ELSE 'ends_at' END`, [full]),
        ended_at: this.db.raw(`CASE WHEN ? THEN ?::timestamptz ELSE ends_at END`, [full, at]),
        updated_at: at,
      })
      .returning('*');
  }

  /**
   * The results of an experiment in one pass over its assignments and the agent's calls they name
   * (trashed calls left out): per variant, the calls with the done ones and the total duration, and
   * the same per value of each outcome field in `fields`. A call gives one row for its variant and
   * one per field it holds, so PostgreSQL aggregates everything and only the groups come back.
   */
  async results(
    experiment: Pick<ExperimentRow, 'id' | 'organization_id' | 'agent_id'>,
    fields: readonly string[],
  ): Promise<VariantResultRow[]> {
    const { rows } = await this.db.raw(
      `SELECT a.variant, f.field, f.value,
              count(*)::int AS calls,
              (count(*) FILTER (WHERE c.done))::int AS done,
              coalesce(sum(c.duration), 0)::float8 AS duration_total
         FROM experiment_assignments a
         JOIN calls c ON c.organization_id = a.organization_id AND c.agent_id = :agent AND c.call_id = a.call_id
        CROSS JOIN LATERAL (
              SELECT NULL::text AS field, NULL::text AS value
              UNION ALL
              SELECT o.key, o.value #>> '{}' FROM jsonb_each(c.extracted_data) o WHERE o.key IN (SELECT jsonb_array_elements_text(:fields::jsonb))
        ) f
        WHERE a.organization_id = :organization AND a.experiment_id = :experiment AND c.deleted_at IS NULL
        GROUP BY a.variant, f.field, f.value`,
      {
        agent: experiment.agent_id,
        organization: experiment.organization_id,
        experiment: experiment.id,
        // As JSON: knex would spread an array binding into a list of values.
        fields: JSON.stringify(fields),
      },
    );
    return rows as VariantResultRow[];
  }

  async running(agentId: string): Promise<RunningExperiment | undefined> {
    const { rows } = await runPrepared(this.db, RUNNING_SQL, { agent: agentId });
    return rows[0] as RunningExperiment | undefined;
  }

  /** The variant stored for the call when it is new (undefined when it was routed before, or no room was left). */
  async assign(a: {
    organization: string;
    call: string;
    experiment: string;
    variant: string;
    at: Date;
  }): Promise<{ variant: string; last_call: boolean } | undefined> {
    const { rows } = await runPrepared(this.db, ASSIGN_SQL, a);
    return rows[0] as { variant: string; last_call: boolean } | undefined;
  }

  async assigned(organization: string, call: string) {
    const { rows } = await runPrepared(this.db, ASSIGNED_SQL, { organization, call });
    return rows[0] as { experiment_id: string; variant: string; name: string } | undefined;
  }

  /** A version of the agent by id, for a variant. */
  async version(agentId: string, versionId: string): Promise<{ id: string; version: number } | undefined> {
    return this.db('agent_versions').where({ agent_id: agentId, id: versionId }).first('id', 'version');
  }
}
