import { queryFlag } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { CONFIGURATION_AGENT_FIELDS } from '../agent-versions/agent-configuration.js';
import { AgentSchema } from '../agents/agent.schemas.js';
import { CreateEmployeeSchema, EmployeeSchema } from '../employees/employee.schemas.js';
import { ForwardingSlotSchema, SlotRowSchema } from '../forwarding-slots/forwarding-slot.schemas.js';
import { SIMULATION_REASONS } from '../simulation/simulation.schemas.js';
import { TOOL_TYPES } from '../tools/tool-config.schemas.js';
import { WorkflowSchema } from '../workflows/workflow.schemas.js';

export const BUNDLE_API_VERSION = 'voice-agent/v1';
/** How a test case's `answered_by_agent` names the agent of the bundle itself (its name changes with a clone). */
export const SELF = '$self';

export const SecretRefSchema = z.strictObject({ $secret: z.string().min(1).max(200) }).openapi('SecretRef', {
  description:
    "A stored credential by name; on import or apply the value comes from the request's `secrets` or stays as stored",
});

/** The agent's fields a bundle carries: exactly what PATCH writes, the backup agent by name. */
export const BUNDLE_CONFIGURATION_FIELDS = CONFIGURATION_AGENT_FIELDS.filter(
  (f) => f !== 'name' && f !== 'backup_agent_id',
);

const configurationShape = Object.fromEntries(
  BUNDLE_CONFIGURATION_FIELDS.map((f) => [f, (AgentSchema.shape as Record<string, z.ZodType>)[f]!]),
);

const BundleConfigurationSchema = z
  .strictObject({
    ...configurationShape,
    post_call_webhook_url: z.union([z.string(), SecretRefSchema]).nullable(),
    backup_agent: z.string().nullable().openapi({ description: 'The backup agent, by name, in the same organization' }),
  })
  .openapi('BundleConfiguration');

const BundleToolSchema = z
  .strictObject({
    name: z.string(),
    display_name: z.string().nullable(),
    description: z.string().nullable(),
    tool_type: z.enum(TOOL_TYPES),
    config: z.record(z.string(), z.unknown()).openapi({
      description:
        'The tool type\'s config; a switch_agent names its target as `target_agent` (by name), credentials are `{"$secret": name}`',
    }),
    is_enabled: z.boolean(),
    priority: z.number().int(),
    employee: z.string().nullable().openapi({ description: 'Transfer tools: the linked employee, by name' }),
  })
  .openapi('BundleTool');

const BundleEmployeeSchema = z
  .strictObject(EmployeeSchema.omit({ id: true, agent_id: true, created_at: true, updated_at: true }).shape)
  .openapi('BundleEmployee');
const BundleSlotSchema = z
  .strictObject(ForwardingSlotSchema.omit({ id: true, agent_id: true, created_at: true, updated_at: true }).shape)
  .openapi('BundleForwardingSlot');
/** What import and apply take: the create rules, unknown fields refused. */
const BundleEmployeeInputSchema = z.strictObject(CreateEmployeeSchema.shape);
const BundleSlotInputSchema = z.strictObject(SlotRowSchema.shape);

const BundleTestCaseSchema = z
  .strictObject({
    name: z.string(),
    input: z.strictObject({ at: z.string(), caller_number: z.string().optional() }),
    expect: z.strictObject({
      accepting_calls: z.boolean().optional(),
      reason: z.enum(SIMULATION_REASONS).optional(),
      answered_by_agent: z
        .string()
        .nullable()
        .optional()
        .openapi({ description: `The agent that answers, by name; "${SELF}" is the bundle's agent` }),
      greeting_contains: z.string().optional(),
      transfer_employee: z.string().nullable().optional().openapi({ description: 'The employee, by name' }),
    }),
  })
  .openapi('BundleTestCase');

const BundleChunkSchema = z.strictObject({
  chunk_index: z.number().int(),
  content: z.string(),
  token_count: z.number().int().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

const BundleDocumentSchema = z
  .strictObject({
    title: z.string(),
    content: z.string(),
    language: z.string().nullable(),
    chunks: z.array(BundleChunkSchema).optional().openapi({
      description: 'Client chunks (documents whose chunks the client brought); embeddings are not exported',
    }),
  })
  .openapi('BundleDocument');

export const BundleSpecSchema = z
  .strictObject({
    configuration: BundleConfigurationSchema,
    workflow: WorkflowSchema.nullable(),
    tools: z.array(BundleToolSchema),
    employees: z.array(BundleEmployeeSchema),
    forwarding_slots: z.array(BundleSlotSchema),
    test_cases: z.array(BundleTestCaseSchema),
    knowledge_base: z.strictObject({
      documents: z.array(BundleDocumentSchema).openapi({ description: "The agent's own documents" }),
      organization_documents: z
        .array(z.string())
        .openapi({ description: 'Titles of the organization documents granted to the agent' }),
    }),
  })
  .openapi('AgentBundleSpec');

export const AgentBundleSchema = z
  .strictObject({
    api_version: z.literal(BUNDLE_API_VERSION),
    kind: z.literal('Agent'),
    name: z.string(),
    spec: BundleSpecSchema,
  })
  .openapi('AgentBundle', {
    description: 'The whole agent as one document, without ids of this installation (references by name)',
  });

export type AgentBundle = z.output<typeof AgentBundleSchema>;

/**
 * What import and apply accept: the bundle, where a hand-written one may leave out what has a
 * default (configuration fields keep their stored or default value, lists are empty).
 */
const BundleToolInputSchema = BundleToolSchema.partial({
  display_name: true,
  description: true,
  config: true,
  is_enabled: true,
  priority: true,
  employee: true,
});
const BundleDocumentInputSchema = BundleDocumentSchema.partial({ language: true });
export const AgentBundleInputSchema = z.strictObject({
  api_version: z.literal(BUNDLE_API_VERSION),
  kind: z.literal('Agent'),
  name: z.string(),
  spec: z.strictObject({
    configuration: BundleConfigurationSchema.partial().default({}),
    workflow: z.unknown().optional(),
    tools: z.array(BundleToolInputSchema).default([]),
    employees: z.array(BundleEmployeeInputSchema).default([]),
    forwarding_slots: z.array(BundleSlotInputSchema).default([]),
    test_cases: z.array(BundleTestCaseSchema).default([]),
    knowledge_base: z
      .strictObject({
        documents: z.array(BundleDocumentInputSchema).default([]),
        organization_documents: z.array(z.string()).default([]),
      })
      .default({ documents: [], organization_documents: [] }),
  }),
});
export type AgentBundleInput = z.output<typeof AgentBundleInputSchema>;
export type BundleSpec = AgentBundle['spec'];
export type BundleTool = BundleSpec['tools'][number];
export type BundleEmployee = BundleSpec['employees'][number];
export type BundleTestCase = BundleSpec['test_cases'][number];
export type BundleDocument = BundleSpec['knowledge_base']['documents'][number];

const secretsField = z
  .record(z.string(), z.string())
  .optional()
  .openapi({ description: 'Values for the `{"$secret": name}` placeholders, by name' });

export const ApplyBundleBodySchema = AgentBundleInputSchema.extend({ secrets: secretsField }).openapi(
  'ApplyAgentBundle',
);

export const ImportBundleBodySchema = AgentBundleInputSchema.extend({
  secrets: secretsField,
  phone_number: z.string().openapi({ description: "The new agent's phone number (E.164): numbers are not in bundles" }),
  organization_id: z.uuid().optional(),
}).openapi('ImportAgentBundle');

export const CloneAgentBodySchema = z
  .strictObject({
    name: z.string(),
    phone_number: z.string(),
    organization_id: z.uuid().optional(),
  })
  .openapi('CloneAgent');

export const BundleChangeSchema = z
  .object({
    path: z.string().openapi({ example: 'spec.tools.lookup_order.config.url' }),
    op: z.enum(['add', 'remove', 'change']),
    from: z.unknown().optional(),
    to: z.unknown().optional(),
  })
  .openapi('BundleChange');

export const BundleChangesSchema = z.object({ changes: z.array(BundleChangeSchema) }).openapi('BundleChanges');
export type BundleChange = z.output<typeof BundleChangeSchema>;

export const DryRunQuerySchema = z.object({
  dry_run: queryFlag('true: answer what would change, store nothing'),
});
