import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { operationsOf, type Operation } from '../support/openapi.js';
import { isPermission } from '../../src/auth/permissions.js';
import { toolsFromDocument } from '../../src/modules/mcp/mcp-tools.js';
import type { OpenApiDocument } from '../../src/openapi/document.js';
import { operationPermission } from '../../src/openapi/operation-permission.js';

// Every operation refuses a query parameter its entry in the OpenAPI document does not declare.
let ctx: TestContext;
let w: World;
let document: OpenApiDocument;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  document = (await ctx.http.get('/v1/openapi.json').expect(200)).body as OpenApiDocument;
});
afterAll(() => ctx.close());

const calls = (agentId = w.agentId) => `/v1/agents/${agentId}/calls`;

type DocParameter = { $ref?: string; name?: string; in?: string };
type DocOperation = { operationId?: string; summary?: string; parameters?: DocParameter[] };

const entryOf = (op: Operation) =>
  (document.paths as Record<string, Record<string, DocOperation>>)[op.path]![op.method]!;

/** The query parameters the document declares for one operation, as the client sees them. */
function declaredQuery(op: Operation): string[] {
  const entry = entryOf(op);
  const shared = (document.components?.parameters ?? {}) as Record<string, DocParameter>;
  return (entry.parameters ?? [])
    .map((p) => (p.$ref ? shared[p.$ref.split('/').pop()!]! : p))
    .filter((p) => p.in === 'query')
    .map((p) => p.name!);
}

/** The operation's path with the world's agent and organization and made-up ids for the rest. */
function pathOf(op: Operation): string {
  return op.path
    .replace('{agentId}', w.agentId)
    .replace('{orgId}', w.orgId)
    .replace(/\{(version|from|to)\}/g, '999999')
    .replace(/\{[^}]+\}/g, () => randomUUID());
}

/** The path's template with every parameter's name taken out (`/calls/{callId}` -> `/calls/{}`). */
const shapeOf = (template: string) => template.replace(/\{[^}]+\}/g, '{}');

/**
 * Whether the operation's path names a resource below its agent or organization that has a read in
 * the document (GET at the template up to its parameter): a made-up id there is that read's 404.
 */
function namesReadableResource(op: Operation): boolean {
  const reads = new Set(
    operationsOf(document)
      .filter((o) => o.method === 'get')
      .map((o) => shapeOf(o.path)),
  );
  const segments = op.path.split('/');
  return segments.some(
    (part, i) =>
      /^\{\w+\}$/.test(part) &&
      part !== '{agentId}' &&
      part !== '{orgId}' &&
      reads.has(shapeOf(segments.slice(0, i + 1).join('/'))),
  );
}

function send(op: Operation, path: string) {
  const req = ctx.http[op.method](path);
  if (op.public) return req;
  return op.tokenOnly ? req.set('Authorization', `Bearer ${w.token}`) : req.set('X-API-Key', w.key);
}

async function callCount(agentId = w.agentId): Promise<number> {
  const row = await ctx.db('calls').where({ agent_id: agentId }).count({ n: '*' }).first();
  return Number(row?.n);
}

describe('an undeclared query parameter (every operation of the document)', () => {
  it('is 400 VALIDATION_ERROR naming it on every operation, with the parameters the operation accepts (404 first for a resource of the path that does not exist)', async () => {
    const ops = operationsOf(document);
    expect(ops.length).toBeGreaterThan(80);
    const lists = ops.filter((op) => op.method === 'get' && declaredQuery(op).includes('limit'));
    expect(lists.length).toBeGreaterThanOrEqual(10);
    const missing = ops.filter(namesReadableResource);
    expect(missing.length).toBeGreaterThanOrEqual(20);
    const before = await callCount();
    for (const op of ops) {
      const res = await send(op, `${pathOf(op)}?bogus_filter=1`);
      const label = `${op.method.toUpperCase()} ${op.path}`;
      if (missing.includes(op)) {
        expect(res.status, label).toBe(404);
        expect(res.body.error.code, label).toBe('NOT_FOUND');
        continue;
      }
      expect(res.status, label).toBe(400);
      expect(res.body.error.request_id, label).toEqual(expect.any(String));
      expect(res.body.error.code, label).toBe('VALIDATION_ERROR');
      const detail = res.body.error.details.find((d: { field: string }) => d.field === 'bogus_filter');
      expect(detail, label).toBeDefined();
      const declared = declaredQuery(op);
      if (declared.length === 0) expect(detail.message, label).toContain('takes no query parameters');
      for (const name of declared) expect(detail.message, label).toContain(name);
    }
    // Nothing was carried out: the writes among them (a call intake too) were refused before acting.
    expect(await callCount()).toBe(before);
    // One request per operation of the document, in a row: the limit grows with the document.
  }, 60_000);

  it('leaves an Idempotency-Key free for the corrected request', async () => {
    const key = `strict-${randomUUID()}`;
    const body = { call_id: `strict-${randomUUID()}`, duration: 5 };
    await ctx.http
      .post(`${calls()}?bogus=1`)
      .set('X-API-Key', w.key)
      .set('Idempotency-Key', key)
      .send(body)
      .expect(400);
    const res = await ctx.http.post(calls()).set('X-API-Key', w.key).set('Idempotency-Key', key).send(body).expect(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  it('names every unknown parameter, each once, beside a declared one', async () => {
    const res = await ctx.http.get(`${calls()}?done=true&foo=1&bar=2`).set('X-API-Key', w.key).expect(400);
    expect(res.body.error.message).toBe('Invalid query parameters');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['bar', 'foo']);
  });
});

describe('suggestions', () => {
  it.each([
    ['phone=+4930123', 'phone', 'phone_number'],
    ['donee=true', 'donee', 'done'],
    ['limt=5', 'limt', 'limit'],
    ['Search=x', 'Search', 'search'],
    ['include_deletd=true', 'include_deletd', 'include_deleted'],
  ])('answers ?%s on the calls list naming %s, "Did you mean %s?"', async (query, field, suggestion) => {
    const res = await ctx.http.get(`${calls()}?${query}`).set('X-API-Key', w.key).expect(400);
    const [detail] = res.body.error.details;
    expect(detail.field).toBe(field);
    expect(detail.message).toContain(`Did you mean ${suggestion}?`);
    expect(detail.message).toContain('This operation accepts: page, limit, done, from, to, phone_number, search');
    expect(detail.message).toContain('extracted.<name>');
  });

  it('suggests nothing when no declared name is close (GET /v1/agents?sort=desc)', async () => {
    const res = await ctx.http.get('/v1/agents?sort=desc').set('X-API-Key', w.key).expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'sort', message: 'Unknown query parameter. This operation accepts: page, limit.' },
    ]);
  });
});

describe('parameters every client may send', () => {
  it('accepts _ (a cache buster) on a list, a single read, a write and the public operations', async () => {
    await ctx.http.get(`${calls()}?_=1732800000000`).set('X-API-Key', w.key).expect(200);
    await ctx.http.get(`/v1/agents/${w.agentId}?_=1`).set('X-API-Key', w.key).expect(200);
    await ctx.http.get(`/v1/agents/${w.agentId}/tools?_=1&_=2`).set('X-API-Key', w.key).expect(200);
    await ctx.http.patch(`/v1/agents/${w.agentId}?_=1`).set('X-API-Key', w.key).send({ name: 'Renamed' }).expect(200);
    await ctx.http.get('/v1/health?_=1').expect(200);
    await ctx.http.get('/v1/openapi.json?_=1').expect(200);
  });

  it('refuses an unknown parameter on the public operations too', async () => {
    const res = await ctx.http.get('/v1/health?verbose=1').expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'verbose', message: 'Unknown query parameter. This operation takes no query parameters.' },
    ]);
  });

  it('lets the extracted.<name> family through to the calls list, which checks it against the analysis fields', async () => {
    const res = await ctx.http.get(`${calls()}?extracted.nope=1`).set('X-API-Key', w.key).expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'extracted.nope', message: 'Not an analysis field of this agent' },
    ]);
  });
});

describe('a repeated parameter', () => {
  it.each([
    ['/v1/agents', 'limit=5&limit=6', 'limit'],
    ['calls', 'limit=5&limit=6', 'limit'],
    ['calls', 'done=true&done=false', 'done'],
    ['calls', 'cursor=&cursor=', 'cursor'],
  ])('on %s: ?%s is 400 naming %s, not "the last one wins"', async (where, query, field) => {
    const path = where === 'calls' ? calls() : where;
    const res = await ctx.http.get(`${path}?${query}`).set('X-API-Key', w.key).expect(400);
    expect(res.body.error.details).toEqual([{ field, message: 'Given more than once; send it once' }]);
  });

  it('refuses a bracketed name as unknown, suggesting the plain one (?limit[]=5)', async () => {
    const res = await ctx.http.get('/v1/agents?limit[]=5').set('X-API-Key', w.key).expect(400);
    expect(res.body.error.details[0]).toMatchObject({ field: 'limit[]', message: expect.stringContaining('limit?') });
  });
});

describe('order: credentials, then the resource, then the query', () => {
  it('answers 401 without credentials and with a bad key', async () => {
    await ctx.http.get(`${calls()}?phone=1`).expect(401);
    await ctx.http
      .get(`${calls()}?phone=1`)
      .set('X-API-Key', `svc_live_${'0'.repeat(32)}`)
      .expect(401);
  });

  it('answers 403 to a key without the permission, on a list, a write and a route without a path agent', async () => {
    const user = await ctx.build.user(w.orgId);
    const { key } = await ctx.build.apiKey(w.orgId, user.id, { permissions: ['contacts:read'] });
    const before = await callCount();
    for (const req of [
      ctx.http.get(`${calls()}?phone=1`),
      ctx.http.post(`${calls()}?bogus=1`).send({ call_id: 'order-403', duration: 1 }),
      ctx.http.get('/v1/agents?sort=desc'),
      ctx.http.get(`/v1/organization/${w.orgId}/audit-log?bogus=1`),
    ]) {
      const res = await req.set('X-API-Key', key).expect(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
    expect(await callCount()).toBe(before);
  });

  it('answers 403 AGENT_NOT_ACCESSIBLE to a key scoped to another agent', async () => {
    const other = await ctx.build.freshAgent(w.orgId);
    const { key } = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [other] });
    const res = await ctx.http.get(`${calls()}?donee=true`).set('X-API-Key', key).expect(403);
    expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
  });

  it('answers 404 for an agent that does not exist or belongs to another organization, and an unreachable organization', async () => {
    const stranger = await ctx.build.world();
    for (const path of [
      `${calls(randomUUID())}?phone=1`,
      `${calls(stranger.agentId)}?phone=1`,
      `/v1/agents/${stranger.agentId}/tools?limit=1`,
      `/v1/organization/${stranger.orgId}/audit-log?bogus=1`,
      `/v1/organization/${stranger.orgId}/calls/stats?bogus=1`,
    ]) {
      const res = await ctx.http.get(path).set('X-API-Key', w.key).expect(404);
      expect(res.body.error.code, path).toBe('NOT_FOUND');
    }
    expect(await callCount(stranger.agentId)).toBe(0);
  });

  it('answers 403 to a member token on a developer_admin operation, and to a scoped key on an every-agent operation', async () => {
    const member = await ctx.build.user(w.orgId, 'member');
    const token = ctx.build.token(member.id);
    for (const path of ['/v1/api-keys?bogus=1', `/v1/organization/${w.orgId}/webhook-secret?bogus=1`]) {
      const res = await ctx.http.get(path).set('Authorization', `Bearer ${token}`).expect(403);
      expect(res.body.error.code, path).toBe('FORBIDDEN');
    }
    const { key } = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    const res = await ctx.http
      .post(`/v1/organization/${w.orgId}/data-subjects/export?bogus=1`)
      .set('X-API-Key', key)
      .send({ phone_number: '+4930123456' })
      .expect(403);
    expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
  });

  it("answers an API key on a dashboard-token-only operation with the mount's 401", async () => {
    const res = await ctx.http.get('/v1/api-keys?bogus=1').set('X-API-Key', w.key).expect(401);
    expect(res.body.error.message).toContain('requires a dashboard login token');
  });

  it('gives the 400 once the caller may call the operation on that resource', async () => {
    await ctx.http.get(`${calls()}?phone=1`).set('X-API-Key', w.key).expect(400);
    await ctx.http.get(`/v1/organization/${w.orgId}/audit-log?bogus=1`).set('X-API-Key', w.key).expect(400);
  });

  it("answers 404 for a resource of the path that does not exist or is another agent's, and 400 for one that exists", async () => {
    const call = await ctx.http
      .post(calls())
      .set('X-API-Key', w.key)
      .send({ call_id: `strict-${randomUUID()}`, duration: 5 })
      .expect(201);
    const callId = (call.body as { id: string }).id;
    const contact = (
      await ctx.http
        .post(`/v1/agents/${w.agentId}/contacts`)
        .set('X-API-Key', w.key)
        .send({ phone_number: '+4930555111' })
        .expect(201)
    ).body as { id: string };
    const other = await ctx.build.freshAgent(w.orgId);
    const contactPath = (agentId: string, id: string) => `/v1/agents/${agentId}/contacts/${id}?bogus=1`;
    await ctx.http.get(`${calls()}/${callId}?bogus=1`).set('X-API-Key', w.key).expect(400);
    expect(
      (await ctx.http.get(`${calls()}/${randomUUID()}?bogus=1`).set('X-API-Key', w.key).expect(404)).body.error.message,
    ).toContain('Call');
    await ctx.http
      .get(`${calls(other)}/${callId}?bogus=1`)
      .set('X-API-Key', w.key)
      .expect(404);
    await ctx.http
      .patch(contactPath(w.agentId, contact.id))
      .set('X-API-Key', w.key)
      .send({ first_name: 'X' })
      .expect(400);
    await ctx.http.patch(contactPath(other, contact.id)).set('X-API-Key', w.key).send({ first_name: 'X' }).expect(404);
    await ctx.http.delete(contactPath(w.agentId, randomUUID())).set('X-API-Key', w.key).expect(404);
    // A malformed id stays the query's 400 (the route would answer 400 for the id too).
    await ctx.http.get(`${calls()}/not-a-uuid?bogus=1`).set('X-API-Key', w.key).expect(400);
    // A key that may write contacts but not read them: its read cannot say, so the query's 400 stands.
    const { key } = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['contacts:write'] });
    await ctx.http.delete(contactPath(w.agentId, randomUUID())).set('X-API-Key', key).expect(400);
    // Nothing was changed by the refused writes.
    const kept = await ctx.http
      .get(`/v1/agents/${w.agentId}/contacts/${contact.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(kept.body).toEqual(contact);
  });
});

describe("TalkPilot's documented filters still answer 200", () => {
  it.each([
    'calls?done=true&from=2026-01-01T00:00:00Z&to=2026-12-31T23:59:59Z&phone_number=%2B4930123456&search=Heizung&include_deleted=false&page=1&limit=20',
    'calls?done=false',
    'calls?from=2026-01-01&to=2026-12-31',
    'calls?cursor=&limit=5',
    'calls/stats?from=2026-03-01&to=2026-03-31&interval=day&tz=Europe/Berlin&group_by=done',
    'employees?status=anwesend&active=true&page=1&limit=10',
    'employees?active=false',
    'knowledge-base?status=completed',
    'knowledge-base?status=ready&page=1&limit=100',
    'contacts?phone_number=030%20123456&tag=vip',
    'contacts?search=Lutz&page=2&limit=5',
    'webhook-deliveries?status=failed',
    'versions?page=1&limit=10',
    'tools',
  ])('GET /v1/agents/{agentId}/%s', async (rest) => {
    await ctx.http.get(`/v1/agents/${w.agentId}/${rest}`).set('X-API-Key', w.key).expect(200);
  });

  it('keeps dry_run on the operations that declare it, and the organization filter of the key list', async () => {
    await ctx.http
      .patch(`/v1/agents/${w.agentId}?dry_run=true`)
      .set('X-API-Key', w.key)
      .send({ name: 'Dry' })
      .expect(200);
    await ctx.http.get(`/v1/api-keys?organization_id=${w.orgId}`).set('Authorization', `Bearer ${w.token}`).expect(200);
    await ctx.http.get('/v1/agents?page=1&limit=5').set('X-API-Key', w.key).expect(200);
  });
});

describe('what clients are told', () => {
  it('gives the MCP tools no query argument the operation does not declare', () => {
    const tools = new Map(toolsFromDocument(document).map((tool) => [tool.name, tool]));
    for (const op of operationsOf(document)) {
      const tool = tools.get(entryOf(op).operationId!);
      if (!tool) continue;
      expect(declaredQuery(op), tool.name).toEqual(expect.arrayContaining(tool.queryParams));
    }
  });

  it('names a permission for every operation an API key may call, so that its 403 comes before the 400', () => {
    for (const op of operationsOf(document).filter((o) => !o.public && !o.tokenOnly)) {
      const permission = operationPermission(entryOf(op)) ?? '';
      expect(isPermission(permission), `${op.method} ${op.path}`).toBe(true);
    }
  });
});
