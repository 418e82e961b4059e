import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintOf } from '../../src/modules/idempotency/idempotency.service.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { CreatedApiKeySchema } from '../../src/modules/api-keys/api-key.schemas.js';
import { ContactSchema } from '../../src/modules/contacts/contact.schemas.js';

let ctx: TestContext;
let w: World;

beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const contacts = (agentId = w.agentId) => `/v1/agents/${agentId}/contacts`;

function create(key: string | undefined, body: Record<string, unknown>, apiKey = w.key, path = contacts()) {
  const req = ctx.http.post(path).set('X-API-Key', apiKey);
  if (key !== undefined) req.set('Idempotency-Key', key);
  return req.send(body);
}

const contactsNamed = (name: string) => ctx.db('contacts').where({ customer_name: name }).count({ n: '*' }).first();

describe('Idempotency-Key on POST', () => {
  it('runs the first request and replays its status and body for the same request, doing nothing again', async () => {
    const key = randomUUID();
    const first = await create(key, { customer_name: 'Once' }).expect(201);
    expectSchema(first, ContactSchema);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await create(key, { customer_name: 'Once' }).expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toMatch(/application\/json/);
    expectSchema(again, ContactSchema);
    expect(again.body).toEqual(first.body);
    expect(await contactsNamed('Once')).toEqual({ n: 1 });
  });

  it('without the header, every request runs', async () => {
    await create(undefined, { customer_name: 'Twice' }).expect(201);
    await create(undefined, { customer_name: 'Twice' }).expect(201);
    expect(await contactsNamed('Twice')).toEqual({ n: 2 });
  });

  it('refuses the same key with a different body or path with 422, naming the header', async () => {
    const key = randomUUID();
    await create(key, { customer_name: 'Body A' }).expect(201);
    const otherBody = await create(key, { customer_name: 'Body B' }).expect(422);
    expect(otherBody.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ field: 'Idempotency-Key', message: expect.any(String) }],
    });
    const agent = await ctx.build.agent(w.orgId);
    await create(key, { customer_name: 'Body A' }, w.key, contacts(agent.id)).expect(422);
    expect(await contactsNamed('Body B')).toEqual({ n: 0 });
  });

  it('answers 409 with Retry-After while the first request is still running; after an abandoned lock a retry runs', async () => {
    const key = randomUUID();
    const body = { customer_name: 'Running' };
    const credential = `key:${w.keyId}`;
    const now = ctx.clock.now();
    // The first request holds the key (as if another instance were still working on it).
    await ctx.db('idempotency_keys').insert({
      credential,
      idempotency_key: key,
      organization_id: w.orgId,
      fingerprint: fingerprintOf({ method: 'POST', path: contacts(), body }),
      state: 'running',
      locked_at: now,
      created_at: now,
      expires_at: new Date(now.getTime() + 86_400_000),
    });
    const busy = await create(key, body).expect(409);
    expect(busy.headers['retry-after']).toBe('1');
    expect(busy.body.error.code).toBe('CONFLICT');
    expect(await contactsNamed('Running')).toEqual({ n: 0 });

    ctx.clock.advance(61_000);
    const res = await create(key, body).expect(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await contactsNamed('Running')).toEqual({ n: 1 });
  });

  it('executes 20 concurrent identical requests once', async () => {
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 20 }, () => create(key, { customer_name: 'Concurrent' })));
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(results.filter((r) => r.status === 201 && !r.headers['idempotent-replayed'])).toHaveLength(1);
    expect(await contactsNamed('Concurrent')).toEqual({ n: 1 });
  });

  it('keeps keys per credential: the same key from another API key is a different request', async () => {
    const other = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 1000 });
    const key = randomUUID();
    await create(key, { customer_name: 'Per Credential' }).expect(201);
    const res = await create(key, { customer_name: 'Per Credential' }, other.key).expect(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await contactsNamed('Per Credential')).toEqual({ n: 2 });
  });

  it("follows a key's rotation: the replacement key gets the replay of what the old key did", async () => {
    const old = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 1000 });
    const key = randomUUID();
    const first = await create(key, { customer_name: 'Rotated Once' }, old.key).expect(201);
    const rotated = await ctx.http
      .post(`/v1/api-keys/${old.id}/rotate`)
      .set('Authorization', `Bearer ${w.token}`)
      .expect(201);
    const again = await create(key, { customer_name: 'Rotated Once' }, rotated.body.key).expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await contactsNamed('Rotated Once')).toEqual({ n: 1 });
  });

  it('replays a dry run as a dry run (Dry-Run: true), and the real request needs its own key', async () => {
    const key = randomUUID();
    const path = `${contacts()}?dry_run=true`;
    const first = await create(key, { customer_name: 'Dry Once' }, w.key, path).expect(200);
    expect(first.headers['dry-run']).toBe('true');
    const again = await create(key, { customer_name: 'Dry Once' }, w.key, path).expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['dry-run']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await contactsNamed('Dry Once')).toEqual({ n: 0 });
    // A real answer, recorded and replayed, never says it was a dry run.
    const real = randomUUID();
    await create(real, { customer_name: 'Dry Once' }).expect(201);
    const replayed = await create(real, { customer_name: 'Dry Once' }).expect(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.headers['dry-run']).toBeUndefined();
  });

  it('does not keep a 400: the corrected request with the same key runs', async () => {
    const key = randomUUID();
    await create(key, { customer_name: 'Bad', phone_number: '12ab' }).expect(400);
    const res = await create(key, { customer_name: 'Bad', phone_number: '+4930123987' }).expect(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  it('replays a kept client error too (404), marked as replayed', async () => {
    const key = randomUUID();
    const missing = contacts('00000000-0000-4000-8000-000000000000');
    const first = await create(key, { customer_name: 'Nowhere' }, w.key, missing).expect(404);
    const again = await create(key, { customer_name: 'Nowhere' }, w.key, missing).expect(404);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('works on PATCH as well', async () => {
    const created = await create(undefined, { customer_name: 'Patch Me' }).expect(201);
    const key = randomUUID();
    const path = `${contacts()}/${created.body.id}`;
    const first = await ctx.http
      .patch(path)
      .set('X-API-Key', w.key)
      .set('Idempotency-Key', key)
      .send({ note: 'n1' })
      .expect(200);
    expectSchema(first, ContactSchema);
    const again = await ctx.http
      .patch(path)
      .set('X-API-Key', w.key)
      .set('Idempotency-Key', key)
      .send({ note: 'n1' })
      .expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['non-ASCII', 'schlüssel'],
  ])('refuses a %s key with 400 naming the header', async (_name, key) => {
    const res = await create(key, { customer_name: 'Invalid Key' }).expect(400);
    expect(res.body.error.details).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    expect(await contactsNamed('Invalid Key')).toEqual({ n: 0 });
  });

  it('accepts a Structured Field string ("...") as the same key', async () => {
    const key = randomUUID();
    await create(key, { customer_name: 'Quoted' }).expect(201);
    const res = await create(`"${key}"`, { customer_name: 'Quoted' }).expect(201);
    expect(res.headers['idempotent-replayed']).toBe('true');
  });

  it('forgets a key after 24 hours; the scheduled cleanup deletes expired keys', async () => {
    const key = randomUUID();
    await create(key, { customer_name: 'Expiring' }).expect(201);
    ctx.clock.advance(24 * 3_600_000 + 1000);
    const res = await create(key, { customer_name: 'Expiring' }).expect(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await contactsNamed('Expiring')).toEqual({ n: 2 });

    ctx.clock.advance(24 * 3_600_000 + 1000);
    const deleted = await ctx.internals.idempotencyCleanup.run();
    expect(deleted).toBeGreaterThan(0);
    expect(
      await ctx.db('idempotency_keys').where('expires_at', '<=', ctx.clock.now()).count({ n: '*' }).first(),
    ).toEqual({
      n: 0,
    });
  });
});

describe('Idempotency-Key on API-key management', () => {
  it('is ignored: the response carries the secret key, which is never stored', async () => {
    const key = randomUUID();
    const body = { name: 'Not replayed', permissions: ['agents:read'] };
    const send = () =>
      ctx.http.post('/v1/api-keys').set('Authorization', `Bearer ${w.token}`).set('Idempotency-Key', key).send(body);
    const first = await send().expect(201);
    const second = await send().expect(201);
    expectSchema(first, CreatedApiKeySchema);
    expectSchema(second, CreatedApiKeySchema);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.body.id).not.toBe(first.body.id);
    expect(await ctx.db('idempotency_keys').where({ idempotency_key: key }).count({ n: '*' }).first()).toEqual({
      n: 0,
    });
  });
});

describe('Idempotency-Key in the OpenAPI document', () => {
  it('is a header parameter of every POST, PUT and PATCH (API-key management and data-subject exports excepted)', async () => {
    const doc = (await ctx.http.get('/v1/openapi.json').expect(200)).body;
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header' });
    let operations = 0;
    for (const [path, item] of Object.entries<Record<string, { parameters?: { $ref?: string }[] }>>(doc.paths)) {
      for (const method of ['post', 'put', 'patch']) {
        const operation = item[method];
        if (!operation) continue;
        const refs = (operation.parameters ?? []).map((p) => p.$ref);
        if (path.startsWith('/v1/api-keys') || path.endsWith('/data-subjects/export'))
          expect(refs).not.toContain('#/components/parameters/IdempotencyKey');
        else {
          expect(refs, `${method} ${path}`).toContain('#/components/parameters/IdempotencyKey');
          operations += 1;
        }
      }
    }
    expect(operations).toBeGreaterThan(10);
  });
});
