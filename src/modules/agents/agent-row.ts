import type { z } from '../../openapi/zod.js';
import type { Workflow } from '../workflows/workflow.schemas.js';
import type { AgentSchema } from './agent.schemas.js';

/*
 * In a file of their own, without the repository, so that authentication (which may carry an agent
 * read together with the key) can name them without an import cycle.
 */

/** The Agent as the API returns it, with the timestamps as the driver hands them over. */
export type Agent = Omit<z.output<typeof AgentSchema>, 'created_at' | 'updated_at'> & {
  created_at: Date;
  updated_at: Date;
};

/** A row of `agents`: the Agent's fields and the workflow, which has its own endpoints. */
export type AgentRow = Agent & { workflow: Workflow | null; workflow_updated_at: Date | null };
