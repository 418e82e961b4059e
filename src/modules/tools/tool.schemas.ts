import { z } from '../../openapi/zod.js';
import { TOOL_CONFIG_SCHEMAS, TOOL_TYPES } from './tool-config.schemas.js';
import { uuidField } from '../../api/validate.js';
import { text } from '../../validation/text.js';

const fields = {
  name: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,99}$/, 'Must match ^[a-z][a-z0-9_]{0,99}$ (lowercase letters, digits, underscores)')
    .openapi({ example: 'transfer_to_office' }),
  display_name: text({ min: 1, max: 255, trim: true }).nullable(),
  description: text({
    min: 1,
    max: 2000,
    trim: true,
    error: 'Required: what the tool does, for the language model',
  }).openapi({
    description: 'What the tool does, for the language model (1 to 2000 characters)',
  }),
  tool_type: z.enum(TOOL_TYPES, { message: `Must be one of: ${TOOL_TYPES.join(', ')}` }),
  // Checked against the schema of the tool's type by the service (so every problem is reported at once).
  config: z.record(z.string(), z.unknown(), { message: 'Must be an object' }),
  is_enabled: z.boolean(),
  priority: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .openapi({ description: 'A lower number is a higher priority (listed first)' }),
  employee_id: uuidField().nullable().openapi({ description: 'Transfer tools only: forward to this employee' }),
};

export const CreateToolSchema = z.object({
  name: fields.name,
  display_name: fields.display_name.default(null),
  description: fields.description,
  tool_type: fields.tool_type,
  config: fields.config.default({}),
  is_enabled: fields.is_enabled.default(true),
  priority: fields.priority.default(0),
  employee_id: fields.employee_id.default(null),
});

/**
 * Unknown fields are ignored; `tool_type` may be sent only with the tool's current type. `config`
 * is merged into the stored one (a field set to null is removed), then validated as a whole.
 */
export const UpdateToolSchema = z.object({
  name: fields.name.optional(),
  display_name: fields.display_name.optional(),
  description: fields.description.optional(),
  tool_type: fields.tool_type.optional(),
  config: fields.config.optional(),
  is_enabled: fields.is_enabled.optional(),
  priority: fields.priority.optional(),
  employee_id: fields.employee_id.optional(),
});

/** Documentation: `config` is one of the 14 type schemas, chosen by `tool_type`. */
const configSchemas: z.ZodType[] = Object.values(TOOL_CONFIG_SCHEMAS);
const ConfigDoc = z
  .union(configSchemas as [z.ZodType, z.ZodType, ...z.ZodType[]])
  .openapi({ description: 'The schema of the tool_type (see the *ToolConfig components)' });

export const CreateToolDoc = CreateToolSchema.extend({ config: ConfigDoc.optional() }).openapi('CreateTool');
export const UpdateToolDoc = UpdateToolSchema.extend({
  config: z.record(z.string(), z.unknown()).optional().openapi({
    description:
      "Merged into the stored config (JSON merge patch: a field set to null is removed, objects merge, lists replace); the result is validated against the tool type's schema",
  }),
}).openapi('UpdateTool');

export const ToolSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    name: z.string(),
    display_name: z.string().nullable(),
    description: z.string().nullable(),
    tool_type: z.enum(TOOL_TYPES),
    config: ConfigDoc,
    is_enabled: z.boolean(),
    priority: z.number().int(),
    employee_id: z.uuid().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Tool');
