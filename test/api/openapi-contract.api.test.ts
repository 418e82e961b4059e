import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';

type Response = { $ref?: string; headers?: Record<string, unknown> };
type Operation = {
  operationId?: string;
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  parameters?: { name: string; in: string; schema: { type?: string } }[];
  responses: Record<string, Response>;
};
type Document = {
  info: { license?: { name: string } };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { allOf?: unknown[]; properties?: Record<string, unknown> }> };
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

function operations(group: Document['paths']): { name: string; op: Operation }[] {
  return Object.entries(group).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ name: `${m.toUpperCase()} ${path}`, op: item[m]! })),
  );
}

let ctx: TestContext;
let document: Document;
beforeAll(async () => {
  ctx = await createTestContext({ config: { PUBLIC_BASE_URL: 'https://voice.example.org/' } });
  document = (await ctx.http.get('/v1/openapi.json').expect(200)).body;
});
afterAll(() => ctx.close());

describe('the OpenAPI contract', () => {
  it('gives every operation and webhook a unique camelCase operationId', () => {
    const all = [...operations(document.paths), ...operations(document.webhooks)];
    const missing = all.filter(({ op }) => !op.operationId).map(({ name }) => name);
    expect(missing, 'operations without operationId').toEqual([]);
    const notCamelCase = all.filter(({ op }) => !/^[a-z][a-zA-Z0-9]*$/.test(op.operationId!));
    expect(notCamelCase.map(({ name }) => name)).toEqual([]);
    const ids = all.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps the operationIds clients already use', () => {
    const id = (method: string, path: string) => document.paths[path]?.[method]?.operationId;
    expect(id('get', '/v1/agents')).toBe('listAgents');
    expect(id('get', '/v1/agents/{agentId}')).toBe('getAgent');
    expect(id('patch', '/v1/agents/{agentId}')).toBe('updateAgent');
    expect(id('post', '/v1/agents/{agentId}/calls')).toBe('reportCall');
  });

  it('documents X-Request-Id on every response and 405 and 500 on every operation', () => {
    for (const { name, op } of operations(document.paths)) {
      expect(op.responses['405'], name).toEqual({ $ref: '#/components/responses/MethodNotAllowed' });
      expect(op.responses['500'], name).toBeDefined();
      if (op.requestBody) expect(op.responses['413'], name).toBeDefined();
      for (const [status, response] of Object.entries(op.responses)) {
        if (response.$ref) continue;
        expect(response.headers?.['X-Request-Id'], `${name} ${status}`).toBeDefined();
      }
    }
  });

  it('documents the rate-limit headers and Retry-After where API keys are limited', () => {
    const limited = operations(document.paths).filter(({ op }) => op.security?.some((s) => 'ApiKeyAuth' in s));
    expect(limited.length).toBeGreaterThan(40);
    for (const { name, op } of limited) {
      expect(Object.keys(op.responses['429']?.headers ?? {}), name).toEqual(
        expect.arrayContaining(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
      );
      const success = Object.entries(op.responses).find(([status]) => status.startsWith('2'))![1];
      expect(Object.keys(success.headers ?? {}), name).toContain('X-RateLimit-Remaining');
    }
  });

  it('declares the public routes and the webhooks as needing no credentials', () => {
    expect(document.paths['/v1/health']!.get!.security).toEqual([]);
    expect(document.paths['/v1/openapi.json']!.get!.security).toEqual([]);
    for (const { name, op } of operations(document.webhooks)) expect(op.security, name).toEqual([]);
  });

  it('types page and limit as integers', () => {
    const params = operations(document.paths).flatMap(({ op }) =>
      (op.parameters ?? []).filter((p) => p.in === 'query' && (p.name === 'page' || p.name === 'limit')),
    );
    expect(params.length).toBeGreaterThan(10);
    for (const p of params) expect(p.schema.type).toBe('integer');
  });

  it('names the license and takes the server from PUBLIC_BASE_URL', () => {
    expect(document.info.license?.name).toBeTruthy();
    expect(document.servers).toEqual([{ url: 'https://voice.example.org', description: 'This deployment' }]);
  });

  it('answers a wrong method on a known path as documented: 405, Allow and X-Request-Id', async () => {
    const w = await ctx.build.world();
    const res = await ctx.http.delete(`/v1/agents/${w.agentId}/status`).set('X-API-Key', w.key).expect(405);
    expect(res.headers.allow).toBe('GET');
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
    expect(res.headers['x-request-id']).toBe(res.body.error.request_id);
    expect(res.body.error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('declares what the shared middleware answers on any write: 400, 413, 415, 422 (checked by ctx.http)', async () => {
    const w = await ctx.build.world();
    const contacts = `/v1/agents/${w.agentId}/contacts`;
    const post = () => ctx.http.post(contacts).set('X-API-Key', w.key);
    // Each answer below is checked against the served document by ctx.http (test/support/contract.ts):
    // a status the operation does not declare fails the request.
    await post()
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'x-bogus')
      .send('{"customer_name":"A"}')
      .expect(415);
    await post().set('Idempotency-Key', 'k'.repeat(300)).send({ customer_name: 'A' }).expect(400);
    await post().set('Idempotency-Key', 'contract-1').send({ customer_name: 'Ada' }).expect(201);
    const reused = await post().set('Idempotency-Key', 'contract-1').send({ customer_name: 'Bob' }).expect(422);
    expect(reused.body.error.code).toBe('VALIDATION_ERROR');
    await post()
      .send({ customer_name: 'x'.repeat(2_000_000) })
      .expect(413);
    await ctx.http.get('/v1/organization').query({ q: 'a\u0000b' }).set('X-API-Key', w.key).expect(400);
    const deliveries = `/v1/agents/${w.agentId}/webhook-deliveries/${w.agentId}/redeliver`;
    await ctx.http
      .post(deliveries)
      .set('X-API-Key', w.key)
      .send({ padding: 'x'.repeat(2_000_000) })
      .expect(413);
  });

  it('lets a null stand where the document allows one, and only there', () => {
    const status = document.components.schemas.AgentStatus!;
    expect(status.properties!.exception).toEqual({
      anyOf: [{ $ref: '#/components/schemas/ScheduleException' }, { type: 'null' }],
      description: expect.any(String),
    });
    const paging = document.components.schemas.CallsPagination!;
    expect(
      paging.allOf,
      'CallsPagination stands alone (allOf with Pagination would forbid a null page)',
    ).toBeUndefined();
    expect(paging.properties!.page).toMatchObject({ type: ['integer', 'null'] });
  });
});
