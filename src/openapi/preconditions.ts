import type { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';

type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/** GETs of a single configuration resource: `ETag` on 200, `If-None-Match`, 304. */
const CONDITIONAL_READS = [
  'getAgent',
  'getWorkflow',
  'getTool',
  'getEmployee',
  'listForwardingSlots',
  'getForwardingSlot',
  'getContact',
  'getCall',
  'getKnowledgeBaseDocument',
  'getOrganizationKnowledgeBaseDocument',
  'getOrganization',
  'getApiKey',
  'getMe',
  'getAgentBundle',
];

/** Writes that take `If-Match` (412) and, where an organization asks for it, need it (428). */
const CONDITIONAL_WRITES = [
  'updateAgent',
  'deleteAgent',
  'replaceWorkflow',
  'updateTool',
  'deleteTool',
  'updateEmployee',
  'deleteEmployee',
  'replaceForwardingSlots',
  'updateForwardingSlot',
  'deleteForwardingSlot',
  'updateContact',
  'deleteContact',
  'updateKnowledgeBaseDocument',
  'deleteKnowledgeBaseDocument',
  'updateOrganizationKnowledgeBaseDocument',
  'deleteOrganizationKnowledgeBaseDocument',
  'updateOrganization',
  'updateOwnOrganization',
  'updateApiKey',
  'rotateApiKey',
  'deleteApiKey',
  'updateMe',
  'restoreAgentVersion',
  'updateCall',
  'deleteTestCase',
  'deleteKnowledgeBaseChunks',
  'applyAgentBundle',
];

/** A user's own profile belongs to no organization: no `require_if_match`, no 428. */
const WITHOUT_REQUIREMENT = new Set(['updateMe']);

/** Writes whose answer is another resource than the one `If-Match` names (a restore answers the version). */
const UNTAGGED_ANSWER = new Set(['restoreAgentVersion']);

/** Creates whose 201 carries the new resource's `ETag`. */
const TAGGED_CREATES = [
  'createAgent',
  'createTool',
  'createEmployee',
  'createContact',
  'createForwardingSlot',
  'createKnowledgeBaseDocument',
  'createOrganizationKnowledgeBaseDocument',
  'createTestCase',
];

/** Writes with `?dry_run=true`. */
const DRY_RUNS = [
  'updateAgent',
  'replaceWorkflow',
  'createTool',
  'updateTool',
  'createEmployee',
  'updateEmployee',
  'createContact',
  'updateContact',
  'replaceForwardingSlots',
  'applyAgentBundle',
];

type Operation = {
  operationId?: string;
  parameters?: unknown[];
  responses?: Record<string, { $ref?: string; headers?: Record<string, unknown>; description?: string }>;
};

const ref = (kind: 'headers' | 'responses' | 'parameters', name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});

function registerComponents(document: OpenApiDocument): void {
  const components = (document.components ??= {});
  components.headers = {
    ...components.headers,
    ETag: {
      description:
        'Strong entity tag of the representation (a quoted opaque string); it changes whenever the ' +
        'representation does. Send it back in If-Match to write only if nobody changed the resource since.',
      schema: { type: 'string', example: '"q0lQ8Cq3n3aCwZr6dU2b7W0hP1E"' },
    },
    'Dry-Run': {
      description: '`true`: the answer of a dry run; nothing was stored, versioned, audited or sent',
      schema: { type: 'string', enum: ['true'] },
    },
    'Test-Cases-Failed': {
      description:
        'On a dry run of an agent that requires passing test cases: the ids (comma-separated) of the saved ' +
        'cases the change would make fail; the real request would answer 409 TEST_CASES_FAILED',
      schema: { type: 'string', example: '0b6f6f3e-3c1a-4c57-9d53-6a1f0f0d2b11' },
    },
  };
  components.parameters = {
    ...components.parameters,
    IfMatch: {
      name: 'If-Match',
      in: 'header',
      required: false,
      description:
        'Write only if the resource still has one of these ETags (comma-separated), or `*` for any ' +
        'existing one; otherwise 412 PRECONDITION_FAILED and nothing is written. Required (428) when the ' +
        "organization's require_if_match is true. See docs/concurrency.md.",
      schema: { type: 'string', example: '"q0lQ8Cq3n3aCwZr6dU2b7W0hP1E"' },
    },
    IfNoneMatch: {
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description: 'The ETag(s) the client holds: 304 without a body while the resource still has one of them',
      schema: { type: 'string', example: '"q0lQ8Cq3n3aCwZr6dU2b7W0hP1E"' },
    },
    DryRun: {
      name: 'dry_run',
      in: 'query',
      required: false,
      description:
        '`true`: validate and compute the answer exactly as the real request would (201 becomes 200, ' +
        'header `Dry-Run: true`), but store, version, audit and send nothing',
      schema: { type: 'string', enum: ['true', 'false'], default: 'false' },
    },
  };
  const error = (description: string) => ({
    description,
    headers: { 'X-Request-Id': ref('headers', 'X-Request-Id') },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  components.responses = {
    ...components.responses,
    NotModified: {
      description: 'If-None-Match matched: the client already has this representation (no body)',
      headers: { 'X-Request-Id': ref('headers', 'X-Request-Id'), ETag: ref('headers', 'ETag') },
    },
    PreconditionFailed: {
      ...error(
        'PRECONDITION_FAILED: If-Match does not match the current ETag (named in the message); nothing was written',
      ),
      headers: { 'X-Request-Id': ref('headers', 'X-Request-Id'), ETag: ref('headers', 'ETag') },
    },
    PreconditionRequired: error(
      "PRECONDITION_REQUIRED: the organization's require_if_match is true and the request has no If-Match",
    ),
  };
}

function operationsById(document: OpenApiDocument): Map<string, Operation> {
  const byId = new Map<string, Operation>();
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item as Record<string, Operation>)) {
      if (operation && typeof operation === 'object' && operation.operationId)
        byId.set(operation.operationId, operation);
    }
  }
  return byId;
}

function tagSuccess(operation: Operation, dryRun: boolean): void {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (response.$ref || !/^20[01]$/.test(status)) continue;
    response.headers = {
      ...response.headers,
      ETag: ref('headers', 'ETag'),
      ...(dryRun
        ? { 'Dry-Run': ref('headers', 'Dry-Run'), 'Test-Cases-Failed': ref('headers', 'Test-Cases-Failed') }
        : {}),
    };
  }
}

/**
 * Entity tags, preconditions and dry runs, declared on the operations concerned (one list here
 * rather than in each module): the ETag header, If-Match / If-None-Match, 304, 412, 428, dry_run.
 */
export function addPreconditions(document: OpenApiDocument): void {
  registerComponents(document);
  const operations = operationsById(document);
  const each = (ids: string[], apply: (operation: Operation, id: string) => void) => {
    for (const id of ids) {
      const operation = operations.get(id);
      if (operation) apply(operation, id);
    }
  };
  each(CONDITIONAL_READS, (operation) => {
    operation.parameters = [...(operation.parameters ?? []), ref('parameters', 'IfNoneMatch')];
    operation.responses = { ...operation.responses, 304: ref('responses', 'NotModified') };
    tagSuccess(operation, false);
  });
  each(CONDITIONAL_WRITES, (operation, id) => {
    operation.parameters = [...(operation.parameters ?? []), ref('parameters', 'IfMatch')];
    operation.responses = {
      ...operation.responses,
      412: ref('responses', 'PreconditionFailed'),
      ...(WITHOUT_REQUIREMENT.has(id) ? {} : { 428: ref('responses', 'PreconditionRequired') }),
    };
    if (!UNTAGGED_ANSWER.has(id)) tagSuccess(operation, DRY_RUNS.includes(id));
  });
  each(TAGGED_CREATES, (operation, id) => tagSuccess(operation, DRY_RUNS.includes(id)));
  each(DRY_RUNS, (operation) => {
    operation.parameters = [...(operation.parameters ?? []), ref('parameters', 'DryRun')];
    const created = operation.responses?.['201'];
    if (created && !operation.responses?.['200']) {
      operation.responses!['200'] = {
        ...created,
        description: 'dry_run=true: what would be created (nothing was stored)',
        headers: { 'Dry-Run': ref('headers', 'Dry-Run'), 'Test-Cases-Failed': ref('headers', 'Test-Cases-Failed') },
      };
    }
  });
}
