import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS, type Permission } from '../../src/auth/permissions.js';
import type { OpenApiDocument } from '../../src/openapi/document.js';
import type { AgentScope, DeclaredPermission } from '../../src/openapi/common.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { fillPath, operationsOf, type Operation } from '../support/openapi.js';

/**
 * Every operation of the served OpenAPI document against every kind of credential. The expected
 * answer comes only from what the operation declares (`x-permission`, `x-agent-scope`, its
 * security), through the model of src/auth/access.ts: a new operation is covered without a new
 * line here, and one without a declaration fails.
 */

let ctx: TestContext;
let document: OpenApiDocument;
beforeAll(async () => {
  ctx = await createTestContext();
  document = (await ctx.http.get('/v1/openapi.json').expect(200)).body as OpenApiDocument;
});
afterAll(() => ctx.close());

const DECLARED_PERMISSIONS: readonly DeclaredPermission[] = [...PERMISSIONS, 'developer_admin', 'signed_in', 'public'];
const AGENT_SCOPES: readonly AgentScope[] = ['agent', 'filtered', 'unrestricted', 'none'];

type Declared = Operation & { permission: DeclaredPermission; agentScope: AgentScope };

const label = (op: Operation) => `${op.method.toUpperCase()} ${op.path}`;
const isPermission = (p: DeclaredPermission): p is Permission => (PERMISSIONS as readonly string[]).includes(p);
const isRead = (p: DeclaredPermission) => isPermission(p) && p.endsWith(':read');
/** Every permission the operation needs: its `x-permissions` when it needs several, else its `x-permission`. */
const permissionsOf = (op: Operation): Permission[] =>
  Array.isArray(op.permissions)
    ? (op.permissions as Permission[])
    : isPermission(op.permission as DeclaredPermission)
      ? [op.permission as Permission]
      : [];
/** The operation names an organization's resource in its path (an agent, an organization, a key). */
const targeted = (op: Operation) => /\{\w+\}/.test(op.path);

describe('every operation declares its access', () => {
  it('names a known permission and agent scope, matching its security, path and summary', () => {
    const problems: string[] = [];
    const ops = operationsOf(document);
    expect(ops.length).toBeGreaterThan(80);
    for (const op of ops) {
      const { permission, agentScope } = op;
      const summary = (document.paths?.[op.path] as Record<string, { summary?: string }>)[op.method].summary ?? '';
      if (!DECLARED_PERMISSIONS.includes(permission as DeclaredPermission))
        problems.push(`${label(op)}: x-permission ${String(permission)}`);
      if (!AGENT_SCOPES.includes(agentScope as AgentScope))
        problems.push(`${label(op)}: x-agent-scope ${String(agentScope)}`);
      if (op.public !== (permission === 'public')) problems.push(`${label(op)}: public vs security`);
      if ((permission === 'developer_admin' || permission === 'signed_in') && !op.tokenOnly)
        problems.push(`${label(op)}: ${String(permission)} but not token-only`);
      if ((agentScope === 'agent') !== op.path.includes('{agentId}'))
        problems.push(`${label(op)}: agent scope 'agent' iff the path names an agent`);
      if ((op.tokenOnly || op.public) && agentScope !== 'none')
        problems.push(`${label(op)}: no key reaches it, so its agent scope is 'none'`);
      const named = /\b([a-z]+:(?:read|write))\b/.exec(summary)?.[1];
      if (named && named !== permission) problems.push(`${label(op)}: summary names ${named}`);
      if (op.permissions !== undefined) {
        const several = op.permissions as unknown[];
        if (!Array.isArray(several) || several.length < 2 || several[0] !== permission)
          problems.push(`${label(op)}: x-permissions lists several permissions, the first being x-permission`);
        else
          for (const p of several)
            if (!isPermission(p as DeclaredPermission)) problems.push(`${label(op)}: x-permissions ${String(p)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

/** One world for the file: organization A with two agents and an item of every kind, and B. */
async function buildWorld() {
  const limits = { rateLimitPerMinute: 100_000, rateLimitPerHour: 1_000_000 };
  const a = await ctx.build.world();
  const agent2 = await ctx.build.freshAgent(a.orgId, 'Second');
  const b = await ctx.build.world();
  const apiKey = (userId: string, options: Parameters<typeof ctx.build.apiKey>[2] = {}) =>
    ctx.build.apiKey(a.orgId, userId, { ...limits, ...options });

  const member = await ctx.build.user(a.orgId, 'member');
  const removed = await ctx.build.user(a.orgId, 'developer_admin');
  const removedKey = await apiKey(removed.id);
  // Still a member elsewhere, so the key authenticates and only its reach into A is gone.
  await ctx.build.member(removed.id, b.orgId, 'developer_admin');
  await ctx.build.removeMember(removed.id, a.orgId);

  const exact = new Map<string, string>();
  const missing = new Map<Permission, string>();
  for (const p of PERMISSIONS) {
    exact.set(p, (await apiKey(a.userId, { permissions: [p] })).key);
    missing.set(p, (await apiKey(a.userId, { permissions: PERMISSIONS.filter((q) => q !== p) })).key);
  }
  // A key with exactly the permissions of each operation that needs several.
  for (const op of operationsOf(document)) {
    const set = permissionsOf(op);
    if (set.length > 1 && !exact.has(set.join(',')))
      exact.set(set.join(','), (await apiKey(a.userId, { permissions: set })).key);
  }

  const owner = { 'X-API-Key': a.key };
  const post = async (path: string, body: object, auth: Record<string, string> = owner) =>
    ((await ctx.http.post(path).set(auth).send(body).expect(201)).body as { id: string }).id;
  const agentPath = (agentId: string, sub: string) => `/v1/agents/${agentId}/${sub}`;
  let n = 0;
  /** Creates one item of the kind a path parameter names, for an agent of A (consumed by DELETEs). */
  const factories: Record<string, (agentId: string) => Promise<string>> = {
    agentId: () => ctx.build.freshAgent(a.orgId, 'Consumed'),
    employeeId: (id) => post(agentPath(id, 'employees'), { name: 'Matrix' }),
    slotId: (id) => post(agentPath(id, 'forwarding-slots'), { slotnummer: String(++n).padStart(2, '0'), cases: 'M' }),
    toolId: (id) => post(agentPath(id, 'tools'), { name: `matrix_${++n}`, tool_type: 'end_call', description: 'M' }),
    contactId: (id) => post(agentPath(id, 'contacts'), { customer_name: 'Matrix', phone_number: ctx.build.phone() }),
    documentId: (id) => post(agentPath(id, 'knowledge-base'), { title: 'Matrix', content: 'x' }),
    orgDocumentId: () =>
      post(
        `/v1/organization/${a.orgId}/knowledge-base`,
        { title: 'Matrix', content: 'x' },
        { Authorization: `Bearer ${a.token}` },
      ),
    caseId: (id) =>
      post(agentPath(id, 'test-cases'), {
        name: `Matrix ${++n}`,
        input: { at: '2026-11-23T10:00:00Z' },
        expect: { accepting_calls: true },
      }),
    keyId: async () => (await apiKey(a.userId)).id,
    campaignId: (id) => post(agentPath(id, 'campaigns'), { name: 'Matrix', purpose: 'reminder' }),
    outboundCallId: (id) =>
      post(agentPath(id, 'outbound-calls'), { to_number: ctx.build.phone(), purpose: 'callback' }),
    numberId: () => post('/v1/phone-numbers', { number: ctx.build.phone() }),
    experimentId: (id) =>
      post(agentPath(id, 'experiments'), {
        name: `Matrix ${++n}`,
        variants: [
          { name: 'A', current: true, weight: 50 },
          { name: 'B', current: true, weight: 50 },
        ],
      }),
    templateId: () =>
      post('/v1/agent-templates', {
        name: `Matrix ${++n}`,
        bundle: { api_version: 'voice-agent/v1', kind: 'Agent', name: 'Matrix', spec: {} },
      }),
  };

  // A delivery to list and redeliver: the agent's webhook points at a closed port.
  await ctx.db('agents').where({ id: a.agentId }).update({ post_call_webhook_url: 'http://127.0.0.1:9/hook' });
  await ctx.syncCaches();
  await ctx.db.transaction((trx) =>
    ctx.internals.events.record(trx, {
      organization_id: a.orgId,
      agent_id: a.agentId,
      type: 'call.completed',
      payload: { call: { id: 'matrix' } },
    }),
  );
  await ctx.internals.webhookWorker.drain();
  const delivery = await ctx.db('webhook_deliveries').where({ agent_id: a.agentId }).first('id');

  const ids: Record<string, string> = {
    agentId: a.agentId,
    orgId: a.orgId,
    from: '1',
    to: '1',
    deliveryId: delivery.id,
    callId: await post(agentPath(a.agentId, 'calls'), {
      call_id: 'matrix-call',
      phone_number: ctx.build.phone(),
      duration: 10,
    }),
  };
  for (const [param, make] of Object.entries(factories)) if (param !== 'agentId') ids[param] = await make(a.agentId);
  // An open attempt of an outbound call job, as a claim leaves it (its lease far ahead).
  const [attempt] = await ctx
    .db('outbound_attempts')
    .insert({
      organization_id: a.orgId,
      job_id: ids.outboundCallId,
      number: 1,
      claimed_at: new Date(),
      lease_expires_at: new Date(Date.now() + 365 * 86_400_000),
    })
    .returning('id');
  ids.attemptId = attempt.id;
  // A version with the agent's tools as they are now: restoring it changes no tools, so
  // agents:write alone decides (the matrix's tool requests leave the tools as they found them).
  await ctx.http.patch(`/v1/agents/${a.agentId}`).set(owner).send({ name: 'Matrix Agent' }).expect(200);
  const versions = await ctx.http.get(agentPath(a.agentId, 'versions')).set(owner).expect(200);
  ids.version = String(versions.body.data[0].version);

  const key = (k: string) => ({ 'X-API-Key': k });
  const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
  return {
    ids,
    factories,
    credentials: credentialsOf({
      ownerToken: bearer(a.token),
      memberToken: bearer(ctx.build.token(member.id)),
      exact: (p) => key(exact.get(p.join(','))!),
      missing: (p) => key(missing.get(p)!),
      ownerKey: key(a.key),
      memberCreatorKey: key((await apiKey(member.id)).key),
      removedCreatorKey: key(removedKey.key),
      scopedKey: key((await apiKey(a.userId, { allowedAgentIds: [agent2] })).key),
      otherKey: key(b.key),
      otherToken: bearer(b.token),
    }),
  };
}

type Headers = Record<string, string>;
type Credential = { name: string; auth(op: Declared): Headers; allowed(op: Declared): boolean };

/**
 * The model, per credential: whether the operation lets it through. Keys never reach token-only
 * operations; a key holds a permission only where its creator's role holds it too; a key limited
 * to other agents passes `filtered` and `none` operations only; a credential of another
 * organization (or whose creator left A) passes only operations that name nothing of A.
 */
function credentialsOf(c: {
  ownerToken: Headers;
  memberToken: Headers;
  exact(p: Permission[]): Headers;
  missing(p: Permission): Headers;
  ownerKey: Headers;
  memberCreatorKey: Headers;
  removedCreatorKey: Headers;
  scopedKey: Headers;
  otherKey: Headers;
  otherToken: Headers;
}): Credential[] {
  const keyAllowed = (op: Declared, holds: boolean, options: { scoped?: boolean; outsider?: boolean } = {}) => {
    if (op.public) return true;
    if (op.tokenOnly || !holds) return false;
    if (options.scoped && (op.agentScope === 'agent' || op.agentScope === 'unrestricted')) return false;
    return !(options.outsider && targeted(op));
  };
  const permissionOf = (op: Declared) => (isPermission(op.permission) ? op.permission : undefined);
  // Of several permissions, the key without the last one (the first is asked by the agent check already).
  const lastOf = (op: Declared) => permissionsOf(op).at(-1);
  return [
    { name: 'owner token', auth: () => c.ownerToken, allowed: () => true },
    {
      name: 'member token',
      auth: () => c.memberToken,
      allowed: (op) =>
        op.public || op.permission === 'signed_in' || (isRead(op.permission) && permissionsOf(op).every(isRead)),
    },
    {
      name: 'key with exactly the permission',
      auth: (op) => (permissionOf(op) ? c.exact(permissionsOf(op)) : c.ownerKey),
      allowed: (op) => keyAllowed(op, true),
    },
    {
      name: 'key with every other permission',
      auth: (op) => (permissionOf(op) ? c.missing(lastOf(op)!) : c.ownerKey),
      allowed: (op) => keyAllowed(op, !permissionOf(op)),
    },
    {
      name: 'key of a member',
      auth: () => c.memberCreatorKey,
      allowed: (op) => keyAllowed(op, isRead(op.permission) && permissionsOf(op).every(isRead)),
    },
    {
      name: 'key of a creator removed from the organization',
      auth: () => c.removedCreatorKey,
      allowed: (op) => keyAllowed(op, true, { outsider: true }),
    },
    {
      name: 'key scoped to another agent',
      auth: () => c.scopedKey,
      allowed: (op) => keyAllowed(op, true, { scoped: true }),
    },
    {
      name: 'key of another organization',
      auth: () => c.otherKey,
      allowed: (op) => keyAllowed(op, true, { outsider: true }),
    },
    {
      name: 'token of another organization',
      auth: () => c.otherToken,
      allowed: (op) => op.public || !targeted(op),
    },
  ];
}

const FORBIDDEN = new Set([401, 403, 404]);
const WRITES = new Set(['post', 'put', 'patch']);

type World = Awaited<ReturnType<typeof buildWorld>>;

/** The mismatches between the model and the answers of one operation, for every credential at once. */
async function check(op: Declared, { ids, factories, credentials }: World): Promise<string[]> {
  // An organization document's id is not an agent document's.
  const inOrganization = op.path.startsWith('/v1/organization/');
  const base = inOrganization ? { ...ids, documentId: ids.orgDocumentId } : ids;
  // The item an allowed request uses up (deleted, or a key rotated away).
  const consumed = op.path.endsWith('{keyId}/rotate')
    ? 'keyId'
    : op.method === 'delete'
      ? /\{(\w+)\}$/.exec(op.path)?.[1]
      : undefined;
  const answers = await Promise.all(
    credentials.map(async (credential) => {
      const allowed = credential.allowed(op);
      const params = { ...base };
      // An allowed request that uses its item up gets one of its own, so the next still finds one.
      if (allowed && consumed) {
        const make = factories[inOrganization && consumed === 'documentId' ? 'orgDocumentId' : consumed];
        if (make) params[consumed] = await make(ids.agentId);
      }
      const req = ctx.http[op.method](fillPath(op.path, params, 'x')).set(credential.auth(op));
      const res = WRITES.has(op.method) ? await req.send({}) : await req;
      const ok = res.status < 500 && (allowed ? !FORBIDDEN.has(res.status) : FORBIDDEN.has(res.status));
      if (ok) return [];
      const error = res.body?.error as { code?: string; message?: string } | undefined;
      const model = allowed ? 'allowed' : 'forbidden';
      return [`${label(op)} as ${credential.name}: ${res.status} ${error?.code} ${error?.message} (model: ${model})`];
    }),
  );
  return answers.flat();
}

/** The operations are checked in parts, so that each stays well inside the test timeout on a loaded machine. */
const PARTS = 8;

describe('the permission matrix', () => {
  let world: World;
  beforeAll(async () => {
    world = await buildWorld();
  });

  for (let part = 0; part < PARTS; part++) {
    it(`answers every operation as declared, for every kind of credential (part ${part + 1} of ${PARTS})`, async () => {
      const ops = (operationsOf(document) as Declared[]).filter((_, i) => i % PARTS === part);
      expect(ops.length).toBeGreaterThan(0);
      const wrong: string[] = [];
      for (const op of ops) wrong.push(...(await check(op, world)));
      expect(wrong).toEqual([]);
    });
  }
});
