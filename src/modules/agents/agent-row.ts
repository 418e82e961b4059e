import type { z } from '../../openapi/zod.js';
import type { Workflow } from '../workflows/workflow.schemas.js';
import type { AgentSchema } from './agent.schemas.js';

/*
 * In a file of their own, without the repository, so that authentication (which may carry an agent
 * read together with the key) can name them without an import cycle.
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
