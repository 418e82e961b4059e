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

/** The call's assignment, once: counts the call and ends the experiment at max_calls in the same statement. */
const ASSIGN_SQL = preparedSql(
  'experiment_assign',
  `WITH bump AS (
     UPDATE experiments SET calls = calls + 1, updated_at = :at,
            status = CASE WHEN max_calls IS NOT NULL AND calls + 1 >= max_calls THEN 'ended' ELSE status END,
            end_reason = CASE WHEN max_calls IS NOT NULL AND calls + 1 >= max_calls THEN 'max_calls' ELSE end_reason END,
            ended_at = CASE WHEN max_calls IS NOT NULL AND calls + 1 >= max_calls THEN :at::timestamptz ELSE ended_at END
      WHERE id = :experiment AND status = 'running'
        AND NOT EXISTS (SELECT 1 FROM experiment_assignments a
                         WHERE a.organization_id = :organization AND a.call_id = :call)
      RETURNING id)
   INSERT INTO experiment_assignments (organization_id, call_id, experiment_id, variant, created_at)
   SELECT :organization, :call, id, :variant, :at FROM bump
   ON CONFLICT (organization_id, call_id) DO NOTHING
   RETURNING variant`,
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

  /** Ends the agent's running experiment when its end date has passed. */
  async endDue(agentId: string, at: Date): Promise<void> {
    await this.db('experiments')
      .where({ agent_id: agentId, status: 'running' })
      .where('ends_at', '<=', at)
      .update({ status: 'ended', end_reason: 'ends_at', ended_at: this.db.raw('ends_at'), updated_at: at });
  }

  async running(agentId: string): Promise<RunningExperiment | undefined> {
    const { rows } = await runPrepared(this.db, RUNNING_SQL, { agent: agentId });
    return rows[0] as RunningExperiment | undefined;
  }

  /** The variant stored for the call: this one when it is new, the earlier one when the call was routed before. */
  async assign(a: { organization: string; call: string; experiment: string; variant: string; at: Date }) {
    const { rows } = await runPrepared(this.db, ASSIGN_SQL, a);
    return (rows[0] as { variant: string } | undefined)?.variant;
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
