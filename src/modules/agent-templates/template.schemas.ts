import { z } from '../../openapi/zod.js';
import { text } from '../../validation/text.js';
import { AgentBundleInputSchema } from '../agent-bundles/bundle.schemas.js';

export const VARIABLE_NAME = /^[a-z][a-z0-9_]{0,39}$/;
/** `{{ name }}` in any string of the template's bundle. */
export const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

const VariableSchema = z
  .strictObject({
    name: z.string().regex(VARIABLE_NAME, 'Must match ^[a-z][a-z0-9_]{0,39}$'),
    description: text({ max: 500 }).optional(),
    default: text({ max: 10_000 }).optional().openapi({ description: 'Used when POST /v1/agents leaves it out' }),
  })
  .openapi('AgentTemplateVariable');

export const CreateTemplateSchema = z
  .strictObject({
    name: text({ min: 1, max: 255, trim: true }),
    description: text({ max: 2000 }).nullable().default(null),
    variables: z.array(VariableSchema).max(100).default([]),
    bundle: AgentBundleInputSchema.openapi({ description: 'An agent bundle whose strings may hold {{placeholders}}' }),
    organization_id: z.uuid().optional(),
  })
  .openapi('CreateAgentTemplate');

export const AgentTemplateSchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    variables: z.array(VariableSchema),
    bundle: z.record(z.string(), z.unknown()).openapi({ description: 'The bundle with its {{placeholders}}' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('AgentTemplate');

export type AgentTemplateVariable = z.output<typeof VariableSchema>;

/** POST /v1/agents with a template: the variables' values, the new agent's number (and name). */
export const AgentFromTemplateSchema = z
  .strictObject({
    template_id: z.uuid(),
    variables: z.record(z.string(), z.string()).default({}),
    phone_number: z.string().openapi({ example: '+4930123456' }),
    name: z.string().optional().openapi({ description: "Default: the template bundle's name, variables filled in" }),
    secrets: z.record(z.string(), z.string()).optional(),
  })
  .openapi('AgentFromTemplate');
