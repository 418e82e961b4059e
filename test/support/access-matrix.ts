import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS, type Permission } from '../../src/auth/permissions.js';
import type { OpenApiDocument } from '../../src/openapi/document.js';
import type { z } from '../../src/openapi/zod.js';
import type { World } from './builders.js';
import type { TestContext } from './context.js';
import { expectSchema } from './expect-schema.js';
import { operationsOf, type Operation } from './openapi.js';

/** What the generated tests need to know about one `/v1/agents/{agentId}/<segment>` resource. */
export type AgentSubResource = {
  /** The path segment under the agent: `contacts`. */
  segment: string;
  /** As error messages name it: `Contact` ("Contact not found"). */
  noun: string;
  /** The item's path parameter: `contactId`. */
  idParam: string;
  read: Permission;
  write: Permission;
  /** The response schemas the OpenAPI document shows for one item and for the list. */
  itemSchema: z.ZodType;
  listSchema: z.ZodType;
  /** A valid create body; called once per item, so unique fields can differ. */
  createBody: () => Record<string, unknown>;
  /** Valid bodies for the other writes, so that only access decides their outcome. */
  bodies?: { patch?: Record<string, unknown>; put?: Record<string, unknown> };
  /** Everything of the agent that a refused request must leave unchanged. */
  state: (agentId: string) => Promise<unknown>;
  /** Whether a member (read-only role) may read with a dashboard token. */
  memberReads?: boolean;
};

type Env = () => { ctx: TestContext; w: World };

/**
 * The tests every agent sub-resource shares: GET by id, DELETE 204, and the access matrix over every
 * operation the OpenAPI document lists under the resource (missing permission, agent out of the
 * key's scope, agent of another organization, item of another agent, malformed ids, member token),
 * each asserting that nothing changed. Call it at the top level of the resource's test file.
 */
export function describeAgentSubResource(resource: AgentSubResource, env: Env): void {
  const { segment, noun, idParam } = resource;
  const base = (agentId: string) => `/v1/agents/${agentId}/${segment}`;
  let document: OpenApiDocument | undefined;

  async function operations(): Promise<Operation[]> {
    const { ctx } = env();
    document ??= (await ctx.http.get('/v1/openapi.json').expect(200)).body as OpenApiDocument;
    const prefix = `/v1/agents/{agentId}/${segment}`;
    const ops = operationsOf(document).filter((o) => o.path === prefix || o.path.startsWith(`${prefix}/`));
    expect(ops.length).toBeGreaterThan(0);
    return ops;
  }

  function send(op: Operation, agentId: string, itemId: string, auth: Record<string, string>) {
    const { ctx } = env();
    const path = op.path.replace('{agentId}', agentId).replace(`{${idParam}}`, itemId);
    const req = ctx.http[op.method](path).set(auth);
    if (op.method === 'post') return req.send(resource.createBody());
    if (op.method === 'patch' || op.method === 'put') return req.send(resource.bodies?.[op.method] ?? {});
    return req;
  }

  async function freshAgentWithItem() {
    const { ctx, w } = env();
    const agentId = await ctx.build.freshAgent(w.orgId);
    const created = await ctx.http.post(base(agentId)).set('X-API-Key', w.key).send(resource.createBody()).expect(201);
    return { agentId, itemId: created.body.id as string };
  }

  const label = (op: Operation) => `${op.method.toUpperCase()} ${op.path}`;

  describe(`${noun} basics and access (generated)`, () => {
    it(`creates, lists and returns one ${noun.toLowerCase()} by id, each matching its schema`, async () => {
      const { ctx, w } = env();
      const agentId = await ctx.build.freshAgent(w.orgId);
      const created = await ctx.http
        .post(base(agentId))
        .set('X-API-Key', w.key)
        .send(resource.createBody())
        .expect(201);
      expectSchema(created, resource.itemSchema);
      const one = await ctx.http
        .get(`${base(agentId)}/${created.body.id}`)
        .set('X-API-Key', w.key)
        .expect(200);
      expectSchema(one, resource.itemSchema);
      expect(one.body).toEqual(created.body);
      const list = await ctx.http.get(base(agentId)).set('X-API-Key', w.key).expect(200);
      expectSchema(list, resource.listSchema);
      expect(list.body.data).toEqual([created.body]);
    });

    it(`deletes with 204 and no body; then the ${noun.toLowerCase()} is 404`, async () => {
      const { ctx, w } = env();
      const agentId = await ctx.build.freshAgent(w.orgId);
      const empty = await resource.state(agentId);
      const created = await ctx.http
        .post(base(agentId))
        .set('X-API-Key', w.key)
        .send(resource.createBody())
        .expect(201);
      const itemId = created.body.id as string;
      const res = await ctx.http
        .delete(`${base(agentId)}/${itemId}`)
        .set('X-API-Key', w.key)
        .expect(204);
      expect(res.text).toBe('');
      expect(await resource.state(agentId)).toEqual(empty);
      const gone = await ctx.http
        .get(`${base(agentId)}/${itemId}`)
        .set('X-API-Key', w.key)
        .expect(404);
      expect(gone.body.error).toMatchObject({ code: 'NOT_FOUND', message: `${noun} not found` });
      await ctx.http
        .delete(`${base(agentId)}/${itemId}`)
        .set('X-API-Key', w.key)
        .expect(404);
    });

    it(`needs ${resource.read} to read and ${resource.write} to write, on every operation, and changes nothing without`, async () => {
      const { ctx, w } = env();
      const { agentId, itemId } = await freshAgentWithItem();
      const before = await resource.state(agentId);
      const others = PERMISSIONS.filter((p) => p !== resource.read && p !== resource.write);
      const none = await ctx.build.apiKey(w.orgId, w.userId, { permissions: others });
      const readOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: [resource.read] });
      for (const op of await operations()) {
        const needed = op.method === 'get' ? resource.read : resource.write;
        const res = await send(op, agentId, itemId, { 'X-API-Key': none.key });
        expect([label(op), res.status, res.body.error]).toEqual([
          label(op),
          403,
          expect.objectContaining({ code: 'FORBIDDEN', message: `API key lacks required permission: ${needed}` }),
        ]);
        if (op.method === 'get') {
          await send(op, agentId, itemId, { 'X-API-Key': readOnly.key }).expect(200);
        } else {
          const res = await send(op, agentId, itemId, { 'X-API-Key': readOnly.key });
          expect([label(op), res.status, res.body.error?.message]).toEqual([
            label(op),
            403,
            `API key lacks required permission: ${resource.write}`,
          ]);
        }
      }
      expect(await resource.state(agentId)).toEqual(before);
    });

    it('is 403 AGENT_NOT_ACCESSIBLE outside the key scope, on every operation, and changes nothing', async () => {
      const { ctx, w } = env();
      const { agentId, itemId } = await freshAgentWithItem();
      const before = await resource.state(agentId);
      const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
      for (const op of await operations()) {
        const res = await send(op, agentId, itemId, { 'X-API-Key': scoped.key });
        expect([label(op), res.status, res.body.error?.code]).toEqual([label(op), 403, 'AGENT_NOT_ACCESSIBLE']);
      }
      expect(await resource.state(agentId)).toEqual(before);
    });

    it('is 404 for an agent of another organization or no agent at all, on every operation, and writes nothing', async () => {
      const { ctx, w } = env();
      const other = await ctx.build.world();
      const before = await resource.state(other.agentId);
      for (const op of await operations()) {
        for (const agentId of [other.agentId, randomUUID()]) {
          const res = await send(op, agentId, randomUUID(), { 'X-API-Key': w.key });
          expect([label(op), res.status, res.body.error?.message]).toEqual([label(op), 404, 'Agent not found']);
        }
      }
      expect(await resource.state(other.agentId)).toEqual(before);
    });

    it(`is 404 for a ${noun.toLowerCase()} of another agent, on every item operation, and changes nothing`, async () => {
      const { ctx, w } = env();
      const owner = await freshAgentWithItem();
      const otherAgent = await ctx.build.freshAgent(w.orgId);
      const before = [await resource.state(owner.agentId), await resource.state(otherAgent)];
      const itemOps = (await operations()).filter((o) => o.path.includes(`{${idParam}}`));
      expect(itemOps.length).toBeGreaterThan(0);
      for (const op of itemOps) {
        const res = await send(op, otherAgent, owner.itemId, { 'X-API-Key': w.key });
        expect([label(op), res.status, res.body.error?.message]).toEqual([label(op), 404, `${noun} not found`]);
      }
      expect([await resource.state(owner.agentId), await resource.state(otherAgent)]).toEqual(before);
    });

    it('is 400 naming the malformed path parameter, on every operation', async () => {
      const { w } = env();
      const { agentId, itemId } = await freshAgentWithItem();
      for (const op of await operations()) {
        const a = await send(op, 'x', itemId, { 'X-API-Key': w.key });
        expect([label(op), a.status, a.body.error?.details]).toEqual([
          label(op),
          400,
          [{ field: 'agentId', message: 'Must be a UUID' }],
        ]);
        if (!op.path.includes(`{${idParam}}`)) continue;
        const b = await send(op, agentId, 'x', { 'X-API-Key': w.key });
        expect([label(op), b.status, b.body.error?.details]).toEqual([
          label(op),
          400,
          [{ field: idParam, message: 'Must be a UUID' }],
        ]);
      }
    });

    if (resource.memberReads) {
      it('lets a member read with a dashboard token but not write, on every operation', async () => {
        const { ctx, w } = env();
        const { agentId, itemId } = await freshAgentWithItem();
        const before = await resource.state(agentId);
        const member = await ctx.build.user(w.orgId, 'member');
        const auth = { Authorization: `Bearer ${ctx.build.token(member.id)}` };
        for (const op of await operations()) {
          const res = await send(op, agentId, itemId, auth);
          expect([label(op), res.status]).toEqual([label(op), op.method === 'get' ? 200 : 403]);
        }
        expect(await resource.state(agentId)).toEqual(before);
      });
    }
  });
}
