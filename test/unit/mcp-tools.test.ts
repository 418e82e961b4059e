import { describe, expect, it } from 'vitest';
import { toolResult } from '../../src/modules/mcp/mcp-server.js';
import { requestFor, toolsFromDocument, visibleTools } from '../../src/modules/mcp/mcp-tools.js';

const document = {
  paths: {
    '/v1/things/{thingId}': {
      get: {
        operationId: 'getThing',
        summary: 'Get a thing (agents:read)',
        'x-permission': 'agents:read',
        security: [{ ApiKeyAuth: [] }, { BearerAuth: [] }],
        parameters: [
          { name: 'thingId', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'tag', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
        ],
      },
      patch: {
        operationId: 'updateThing',
        summary: 'Update a thing (agents:write)',
        'x-permission': 'agents:write',
        description: 'Only the given fields change.',
        security: [{ ApiKeyAuth: [] }],
        parameters: [
          { name: 'thingId', in: 'path', required: true, schema: { type: 'string' } },
          { $ref: '#/components/parameters/IdempotencyKey' },
        ],
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/ThingPatch' } } } },
      },
      put: {
        operationId: 'replaceThing',
        summary: 'Replace a thing (agents:write)',
        'x-permission': 'agents:write',
        security: [{ BearerAuth: [] }],
        parameters: [{ name: 'thingId', in: 'path', required: true, schema: { type: 'string' } }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { oneOf: [{ type: 'object' }, { type: 'array' }] } } },
        },
      },
      delete: {
        operationId: 'deleteThing',
        summary: 'Delete (agents:write)',
        'x-permission': 'agents:write',
        security: [{ ApiKeyAuth: [] }],
      },
    },
    '/v1/api-keys': {
      post: { operationId: 'createApiKey', 'x-permission': 'developer_admin', security: [{ BearerAuth: [] }] },
    },
  },
  components: {
    schemas: {
      ThingPatch: {
        type: 'object',
        properties: { name: { type: 'string' }, parent: { $ref: '#/components/schemas/ThingPatch' } },
        required: ['name'],
        additionalProperties: false,
      },
    },
    parameters: { IdempotencyKey: { name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } } },
  },
};

const tools = toolsFromDocument(document);
const tool = (name: string) => {
  const found = tools.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};

describe('MCP tools from the OpenAPI document', () => {
  it('makes one tool per operation and leaves the secret-returning ones out', () => {
    expect(tools.map((t) => t.name)).toEqual(['getThing', 'replaceThing', 'updateThing', 'deleteThing']);
  });

  it('merges path, query, header parameters and a plain object body into one schema, references inlined', () => {
    const update = tool('updateThing');
    expect(update.body).toBe('flat');
    expect(update.description).toBe('Update a thing (agents:write)\n\nOnly the given fields change.');
    expect(update.inputSchema).toMatchObject({
      type: 'object',
      required: ['thingId', 'name'],
      additionalProperties: false,
      properties: { thingId: { type: 'string' }, idempotency_key: { type: 'string' }, name: { type: 'string' } },
    });
    // A schema that contains itself stops at the second visit.
    expect(JSON.stringify(update.inputSchema)).not.toContain('$ref');
  });

  it('nests a body that is not a plain object under `body`', () => {
    expect(tool('replaceThing').body).toBe('nested');
    expect(tool('replaceThing').inputSchema.required).toEqual(['thingId', 'body']);
  });

  it('annotates reads, destructive writes and idempotent ones', () => {
    expect(tool('getThing').annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(tool('updateThing').annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
    });
    expect(tool('deleteThing').annotations).toMatchObject({ destructiveHint: true, idempotentHint: true });
  });

  it('shows a read-only caller only read tools, an API key no token-only tool, nobody a tool of a permission not held', () => {
    const names = (caller: Parameters<typeof visibleTools>[1], setting: 'read' | 'all' = 'all') =>
      visibleTools(tools, caller, setting).map((t) => t.name);
    expect(names({ kind: 'token', permissions: new Set(['agents:read', 'agents:write']) })).toHaveLength(4);
    expect(names({ kind: 'api_key', permissions: new Set(['agents:read', 'agents:write']) })).not.toContain(
      'replaceThing',
    );
    expect(names({ kind: 'token', permissions: new Set(['agents:read']) })).toEqual(['getThing']);
    expect(names({ kind: 'token', permissions: new Set(['calls:read', 'calls:write']) })).toEqual([]);
    expect(names({ kind: 'api_key' }, 'read')).toEqual(['getThing']);
  });

  it('turns arguments back into the request: path encoded, query repeated, headers, the rest as body', () => {
    expect(requestFor(tool('getThing'), { thingId: 'a/b', tag: ['x', 'y'] })).toEqual({
      method: 'GET',
      target: '/v1/things/a%2Fb?tag=x&tag=y',
      headers: {},
    });
    expect(requestFor(tool('updateThing'), { thingId: 't', idempotency_key: 'k', name: 'n', extra: 1 })).toEqual({
      method: 'PATCH',
      target: '/v1/things/t',
      headers: { 'Idempotency-Key': 'k' },
      body: { name: 'n', extra: 1 },
    });
    expect(requestFor(tool('replaceThing'), { thingId: 't', body: [1] })).toMatchObject({ body: [1] });
    expect(requestFor(tool('getThing'), {})).toEqual({ invalid: 'the argument thingId is required' });
    // A dot segment would be resolved by the URL into another route.
    for (const thingId of ['..', '.'])
      expect(requestFor(tool('getThing'), { thingId })).toMatchObject({ invalid: expect.stringContaining('thingId') });
  });

  it('renders a 2xx as JSON and structuredContent, a 4xx as an error with code, message and details', () => {
    expect(toolResult({ status: 200, body: { id: 1 } })).toEqual({
      content: [{ type: 'text', text: '{\n  "id": 1\n}' }],
      structuredContent: { id: 1 },
    });
    expect(toolResult({ status: 204, body: undefined }).isError).toBeUndefined();
    expect(toolResult({ status: 304, body: undefined }).isError).toBeUndefined();
    expect(toolResult({ status: 503, body: 'gateway down' }).isError).toBe(true);
    const error = toolResult({
      status: 400,
      body: {
        error: {
          code: 'VALIDATION_ERROR',
          message: 'Invalid body',
          details: [{ field: 'name', message: 'Too short' }],
          request_id: 'r1',
        },
      },
    });
    expect(error).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'VALIDATION_ERROR: Invalid body\n- name: Too short\n(HTTP 400, request_id r1)' }],
    });
  });
});
