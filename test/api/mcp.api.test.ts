import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXCLUDED_OPERATIONS } from '../../src/modules/mcp/mcp-tools.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { operationsOf } from '../support/openapi.js';
import { repoRoot } from '../support/server-process.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const clients: Client[] = [];
afterAll(async () => {
  for (const client of clients) await client.close();
});

/** The SDK's own client over Streamable HTTP at /mcp, with these headers on every request. */
async function httpClient(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${ctx.baseUrl}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

/** The operationIds an API key may call (not token-only), less the secret-returning ones. */
function apiKeyOperationIds(): string[] {
  const ids: string[] = [];
  for (const item of Object.values(ctx.openapi.paths ?? {}))
    for (const operation of Object.values(item as Record<string, { operationId?: string; security?: object[] }>)) {
      if (!operation.operationId || EXCLUDED_OPERATIONS.includes(operation.operationId)) continue;
      const security = operation.security ?? [];
      if (security.length === 0 || security.some((s) => 'ApiKeyAuth' in s)) ids.push(operation.operationId);
    }
  return ids.sort();
}

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;
const agentName = async (id: string) => (await ctx.db('agents').where({ id }).first('name')).name as string;

describe('MCP over Streamable HTTP at /mcp', () => {
  it('answers 401 with the error envelope without credentials', async () => {
    const res = await ctx.http
      .post('/mcp')
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })
      .expect(401);
    expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED', message: 'Invalid or missing API key' });
  });

  it('negotiates protocol version 2025-06-18 as well as the latest', async () => {
    const res = await ctx.http
      .post('/mcp')
      .set('X-API-Key', w.key)
      .set('Accept', 'application/json, text/event-stream')
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      })
      .expect(200);
    expect(res.body.result).toMatchObject({
      protocolVersion: '2025-06-18',
      serverInfo: { name: 'voice-agent-management-api' },
      capabilities: { tools: {} },
    });
  });

  it('answers GET with 405 (stateless: no stream to resume)', async () => {
    const res = await ctx.http.get('/mcp').set('X-API-Key', w.key).expect(405);
    expect(res.body.error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('initializes and lists one tool per operation, less the secret-returning ones, for a dashboard token', async () => {
    const client = await httpClient({ Authorization: `Bearer ${w.token}` });
    expect(client.getServerVersion()?.name).toBe('voice-agent-management-api');
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(operationsOf(ctx.openapi).length - EXCLUDED_OPERATIONS.length);
    const names = tools.map((t) => t.name);
    for (const excluded of EXCLUDED_OPERATIONS) expect(names).not.toContain(excluded);
    const getAgent = tools.find((t) => t.name === 'getAgent');
    expect(getAgent?.annotations).toMatchObject({ readOnlyHint: true });
    expect(getAgent?.inputSchema.required).toEqual(['agentId']);
    const deleteAgent = tools.find((t) => t.name === 'deleteAgent');
    expect(deleteAgent?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    const updateAgent = tools.find((t) => t.name === 'updateAgent');
    expect(updateAgent?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(Object.keys(updateAgent?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['agentId', 'name', 'prompt', 'idempotency_key']),
    );
    expect(JSON.stringify(tools)).not.toContain('#/components/');
  });

  it('leaves token-only operations out for an API key', async () => {
    const client = await httpClient({ 'X-API-Key': w.key });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names.sort()).toEqual(apiKeyOperationIds());
    expect(names).not.toContain('getMe');
    expect(names).toContain('updateAgent');
  });

  it('docs/mcp.md names the numbers of tools and operations this server has', async () => {
    const doc = readFileSync(path.join(repoRoot, 'docs/mcp.md'), 'utf8');
    const operations = operationsOf(ctx.openapi);
    const tokenOnly = operations.filter((o) => o.tokenOnly).length;
    const tools = apiKeyOperationIds().length;
    const [, shownTools, shownOperations, shownTokenOnly, shownOthers] =
      /`tools\/list` \((\d+) tools for this all-permission key: the (\d+) operations less the (\d+) token-only ones\s+and (\d+) more left out above;/
        .exec(doc)!
        .map(Number);
    expect({ tools: shownTools, operations: shownOperations, tokenOnly: shownTokenOnly }).toEqual({
      tools,
      operations: operations.length,
      tokenOnly,
    });
    expect(shownTools).toBe(operations.length - tokenOnly - shownOthers!);
    expect(/\| jq '\.result\.tools \| length'\n(\d+)\n/.exec(doc)?.[1]).toBe(String(tools));
    expect(/MCP \(stdio\): (\d+) tools from/.exec(doc)?.[1]).toBe(String(tools));
  });

  it('calls getAgent and returns the agent as text and structuredContent (API key as a Bearer token)', async () => {
    const client = await httpClient({ Authorization: `Bearer ${w.key}` });
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('getMe');
    const result = await client.callTool({ name: 'getAgent', arguments: { agentId: w.agentId } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ id: w.agentId, name: 'Main Agent' });
    expect(JSON.parse(text(result))).toMatchObject({ id: w.agentId });
  });

  it('calls updateAgent through the REST chain: the change lands and the audit log records the key', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId, 'Before MCP');
    const client = await httpClient({ 'X-API-Key': w.key });
    const result = await client.callTool({
      name: 'updateAgent',
      arguments: { agentId, name: 'Renamed by MCP', idempotency_key: `mcp-${agentId}` },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ id: agentId, name: 'Renamed by MCP' });
    expect(await agentName(agentId)).toBe('Renamed by MCP');
    // The same Idempotency-Key with another body is refused, as on the REST route.
    const reused = await client.callTool({
      name: 'updateAgent',
      arguments: { agentId, name: 'Other', idempotency_key: `mcp-${agentId}` },
    });
    expect(reused.isError).toBe(true);
    expect(await agentName(agentId)).toBe('Renamed by MCP');
    // One audit entry, written by the REST request the tool call made (its id numbered after the MCP request's).
    const audit = await ctx.db('audit_log').where({ agent_id: agentId, method: 'PATCH' });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_type: 'api_key', actor_key_prefix: w.key.slice(0, 13) });
    expect(audit[0].request_id).toMatch(/\.1$/);
  });

  it('sends a body that is not one plain object as the body argument (replaceWorkflow)', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId, 'Workflow by MCP');
    const client = await httpClient({ 'X-API-Key': w.key });
    const workflow = {
      name: 'Intake',
      steps: [{ id: 'greet', name: 'Greet', description: 'Greet the caller', completion: 'Greeted' }],
    };
    const result = await client.callTool({ name: 'replaceWorkflow', arguments: { agentId, body: workflow } });
    expect(result.isError).toBeFalsy();
    const got = await client.callTool({ name: 'getWorkflow', arguments: { agentId } });
    expect(JSON.stringify(got.structuredContent)).toContain('Greet the caller');
  });

  it('turns a 4xx into an error result with the code and message, and changes nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId, 'Stays');
    const client = await httpClient({ 'X-API-Key': w.key });
    const result = await client.callTool({ name: 'updateAgent', arguments: { agentId, name: '' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^VALIDATION_ERROR: /);
    expect(text(result)).toContain('- name:');
    expect(await agentName(agentId)).toBe('Stays');
    const missing = await client.callTool({
      name: 'getAgent',
      arguments: { agentId: '00000000-0000-4000-8000-000000000000' },
    });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/^NOT_FOUND: /);
  });

  it('shows a read-only key only read tools, and refuses a write tool by name', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read', 'calls:read'] });
    const client = await httpClient({ 'X-API-Key': key.key });
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    for (const tool of tools) expect(tool.annotations?.readOnlyHint).toBe(true);
    const names = tools.map((t) => t.name);
    expect(names).toContain('getAgent');
    // A POST that needs only agents:read is a read tool.
    expect(names).toContain('previewGreeting');
    expect(names).not.toContain('listEmployees');
    await expect(
      client.callTool({ name: 'updateAgent', arguments: { agentId: w.agentId, name: 'x' } }),
    ).rejects.toThrow(/Unknown tool/);
    expect(await agentName(w.agentId)).toBe('Main Agent');
  });

  it('lets a key scoped to one agent read that agent but not another', async () => {
    const other = await ctx.build.freshAgent(w.orgId, 'Out of scope');
    const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    const client = await httpClient({ 'X-API-Key': key.key });
    const own = await client.callTool({ name: 'getAgent', arguments: { agentId: w.agentId } });
    expect(own.isError).toBeFalsy();
    const refused = await client.callTool({ name: 'getAgent', arguments: { agentId: other } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^AGENT_NOT_ACCESSIBLE: /);
    const updated = await client.callTool({ name: 'updateAgent', arguments: { agentId: other, name: 'No' } });
    expect(updated.isError).toBe(true);
    expect(await agentName(other)).toBe('Out of scope');
  });

  it("counts every message against the key's rate limit once, tools/list and initialize too", async () => {
    const minute = new Date(Date.now() + 60_000);
    minute.setUTCSeconds(0, 0);
    ctx.clock.set(minute);
    try {
      const key = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 6 });
      // initialize and notifications/initialized: two messages.
      const client = await httpClient({ 'X-API-Key': key.key });
      await client.listTools();
      await client.listTools();
      // A tool call is one message: its REST request is not counted again.
      for (let i = 0; i < 2; i++) {
        const ok = await client.callTool({ name: 'getAgent', arguments: { agentId: w.agentId } });
        expect(ok.isError).toBeFalsy();
      }
      const refused = await ctx.http
        .post('/mcp')
        .set('X-API-Key', key.key)
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} })
        .expect(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
      expect(refused.headers['retry-after']).toBe('60');
      await expect(client.listTools()).rejects.toThrow(/RATE_LIMITED/);
      // The same budget as /v1.
      await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(429);
    } finally {
      ctx.clock.set(new Date());
    }
  });

  it('offers only read tools when MCP_TOOLS=read', async () => {
    const readOnly = await createTestContext({ config: { MCP_TOOLS: 'read' } });
    try {
      const world = await readOnly.build.world();
      const client = new Client({ name: 'mcp-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${readOnly.baseUrl}/mcp`), {
          requestInit: { headers: { 'X-API-Key': world.key } },
        }),
      );
      const { tools } = await client.listTools();
      await client.close();
      expect(tools.map((t) => t.name)).toContain('listAgents');
      for (const tool of tools) expect(tool.annotations?.readOnlyHint).toBe(true);
    } finally {
      await readOnly.close();
    }
  });
});

describe('MCP over stdio (npm run mcp)', () => {
  it('initializes, lists and calls getAgent, updateAgent and a failing call against a running server', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId, 'Before stdio');
    const transport = new StdioClientTransport({
      // The documented command; -s keeps npm's own banner off stdout, which carries the protocol.
      command: 'npm',
      args: ['run', '-s', 'mcp', '--', '--base-url', ctx.baseUrl],
      env: { PATH: process.env.PATH ?? '', VAM_API_KEY: w.key },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools.sort()).toEqual(apiKeyOperationIds());

    const got = await client.callTool({ name: 'getAgent', arguments: { agentId } });
    expect(got.structuredContent).toMatchObject({ id: agentId, name: 'Before stdio' });
    const updated = await client.callTool({ name: 'updateAgent', arguments: { agentId, name: 'Renamed over stdio' } });
    expect(updated.isError).toBeFalsy();
    expect(await agentName(agentId)).toBe('Renamed over stdio');
    const failed = await client.callTool({ name: 'updateAgent', arguments: { agentId, unknown_field: 1 } });
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(/^VALIDATION_ERROR: /);
    expect(await agentName(agentId)).toBe('Renamed over stdio');
  }, 60_000);
});
