import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { z } from '../../src/openapi/zod.js';
import { OrganizationSchema } from '../../src/modules/organizations/organization.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const stored = (id: string) => ctx.db('organizations').where({ id }).first();
const patch = (id: string, body: unknown, key = w.key) =>
  ctx.http
    .patch(`/v1/organization/${id}`)
    .set('X-API-Key', key)
    .send(body as object);

describe('PATCH /v1/organization/{orgId}', () => {
  it('updates auto_delete_done_calls and notdienst_bereiche and answers 200 with the organization', async () => {
    const world = await ctx.build.world();
    ctx.clock.set('2026-11-23T10:00:00Z');
    const res = await patch(
      world.orgId,
      { auto_delete_done_calls: true, notdienst_bereiche: [' Heizung ', 'Sanitär', 'Heizung'] },
      world.key,
    ).expect(200);
    expectSchema(res, OrganizationSchema);
    expect(res.body).toMatchObject({
      id: world.orgId,
      auto_delete_done_calls: true,
      notdienst_bereiche: ['Heizung', 'Sanitär'],
      updated_at: '2026-11-23T10:00:00.000Z',
    });
    expect(await stored(world.orgId)).toMatchObject({
      auto_delete_done_calls: true,
      notdienst_bereiche: ['Heizung', 'Sanitär'],
    });
    const list = await ctx.http.get('/v1/organization').set('X-API-Key', world.key).expect(200);
    expectSchema(list, z.object({ data: z.array(OrganizationSchema) }));
    expect(list.body.data[0]).toEqual(res.body);
  });

  it('ignores unknown and other fields such as name', async () => {
    const world = await ctx.build.world();
    const before = await stored(world.orgId);
    const res = await patch(
      world.orgId,
      { name: 'Umbenannt', colour: 'red', auto_delete_done_calls: true },
      world.key,
    ).expect(200);
    expect(res.body.name).toBe(before.name);
    expect((await stored(world.orgId)).name).toBe(before.name);
  });

  it.each([
    [{ auto_delete_done_calls: 'yes' }, 'auto_delete_done_calls'],
    [{ notdienst_bereiche: 'Heizung' }, 'notdienst_bereiche'],
    [{ notdienst_bereiche: ['ok', ''] }, 'notdienst_bereiche[1]'],
    [{ notdienst_bereiche: Array.from({ length: 101 }, (_, i) => `b${i}`) }, 'notdienst_bereiche'],
    [{ call_retention_days: 0 }, 'call_retention_days'],
    [{ call_retention_days: 3651 }, 'call_retention_days'],
    [{ call_retention_days: 30.5 }, 'call_retention_days'],
  ])('refuses %j naming %s and changes nothing', async (body, field) => {
    const before = await stored(w.orgId);
    const res = await patch(w.orgId, { auto_delete_done_calls: true, ...body }).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    expect(await stored(w.orgId)).toEqual(before);
  });

  it('is 403 FORBIDDEN naming organization:write for a key without it', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['organization:read'] });
    const before = await stored(w.orgId);
    const res = await patch(w.orgId, { auto_delete_done_calls: true }, key.key).expect(403);
    expect(res.body.error.message).toBe('API key lacks required permission: organization:write');
    expect(await stored(w.orgId)).toEqual(before);
  });

  it('is 403 for a dashboard member of the organization', async () => {
    const member = await ctx.build.user(w.orgId, 'member');
    await ctx.http
      .patch(`/v1/organization/${w.orgId}`)
      .set('Authorization', `Bearer ${ctx.build.token(member.id)}`)
      .send({ auto_delete_done_calls: true })
      .expect(403);
  });

  it('is 404 for an organization out of reach and changes nothing', async () => {
    const other = await ctx.build.world();
    const before = await stored(other.orgId);
    expect((await patch(other.orgId, { auto_delete_done_calls: true }).expect(404)).body.error.code).toBe('NOT_FOUND');
    expect(await stored(other.orgId)).toEqual(before);
  });

  it('is 400 naming orgId when it is not a UUID', async () => {
    expect((await patch('org-1', {}).expect(400)).body.error.details).toEqual([
      { field: 'orgId', message: 'Must be a UUID' },
    ]);
  });

  it('works for a key restricted to certain agents (organization settings are not agent-scoped)', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [] });
    await patch(w.orgId, { auto_delete_done_calls: false }, key.key).expect(200);
  });
});
