import { z } from '../../openapi/zod.js';
import { text } from '../agents/text.js';

/** Size limits of a workflow; the spec names none, these are recorded in docs/decisions.md. */
export const WORKFLOW_LIMITS = {
  name: 100,
  description: 500,
  steps: 20,
  stepId: 50,
  stepName: 100,
  stepDescription: 20_000,
  completion: 500,
  tools: 20,
  next: 10,
} as const;

export const STEP_TYPES = ['prompt', 'action'] as const;

const L = WORKFLOW_LIMITS;

export const WorkflowStepSchema = z
  .strictObject({
    id: text({ min: 1, max: L.stepId }).openapi({ description: 'Unique within the workflow; referenced by next' }),
    name: text({ min: 1, max: L.stepName }),
    description: text({ min: 1, max: L.stepDescription }).openapi({ description: 'Instruction for the step' }),
    completion: text({ min: 1, max: L.completion }).openapi({ description: 'When the step is complete' }),
    step_type: z.enum(STEP_TYPES).default('prompt'),
    tools: z
      .array(z.string())
      .max(L.tools, `Must have at most ${L.tools} tools`)
      .default([])
      .openapi({ description: "Names of the agent's tools available in the step" }),
    next: z
      .array(z.strictObject({ id: z.string() }))
      .max(L.next, `Must have at most ${L.next} next steps`)
      .default([])
      .openapi({ description: 'Steps that may follow; empty marks a terminal step' }),
  })
  .openapi('WorkflowStep');

export const WorkflowSchema = z
  .strictObject({
    name: text({ min: 1, max: L.name }),
    description: text({ max: L.description }).optional(),
    steps: z
      .array(WorkflowStepSchema)
      .min(1, 'Must have at least 1 step')
      .max(L.steps, `Must have at most ${L.steps} steps`),
  })
  .openapi('Workflow');

export type Workflow = z.output<typeof WorkflowSchema>;

export const WorkflowRecordSchema = z
  .object({
    agent_id: z.uuid(),
    workflow: WorkflowSchema.nullable(),
    updated_at: z.iso
      .datetime()
      .openapi({ description: "When the workflow last changed (the agent's creation if never)" }),
  })
  .openapi('WorkflowRecord');

/** The three accepted PUT bodies: the Workflow itself, `{workflow: Workflow}`, `{workflow: null}`. */
export const WorkflowPutBodySchema = z
  .union([WorkflowSchema, z.object({ workflow: WorkflowSchema.nullable() })])
  .openapi('WorkflowPutBody');
