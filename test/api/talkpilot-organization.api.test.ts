import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { z } from '../../src/openapi/zod.js';
import { OrganizationSchema } from '../../src/modules/organizations/organization.schemas.js';

// TalkPilot's organization settings, in the newer (with id) and older (without id) request forms.
let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const SWITCHES = {
  cascade_done_same_number: true,
  calendar_status_update: true,
  forward_call_email: true,
  transfer_popup_enabled: true,
};

describe('TalkPilot organization fields', () => {
  it('stores and returns the four switches, and shows the read-only concurrency fields', async () => {
    const world = await ctx.build.world();
    const res = await ctx.http
      .patch(`/v1/organization/${world.orgId}`)
      .set('X-API-Key', world.key)
      .send({ ...SWITCHES, auto_delete_done_calls: true })
      .expect(200);
    expectSchema(res, OrganizationSchema);
    expect(res.body).toMatchObject({
      ...SWITCHES,
      auto_delete_done_calls: true,
      notdienst_bereiche: null,
      max_concurrent_calls: null,
      concurrency_overflow_number: null,
    });
    const list = await ctx.http.get('/v1/organization').set('X-API-Key', world.key).expect(200);
    expectSchema(list, z.object({ data: z.array(OrganizationSchema) }));
    expect(list.body.data[0]).toEqual(res.body);
    expect(await ctx.db('organizations').where({ id: world.orgId }).first()).toMatchObject(SWITCHES);
  });

  it('stores notdienst_bereiche: [] (and null) as null, meaning one emergency service', async () => {
    const world = await ctx.build.world();
    const patch = (body: object) =>
      ctx.http.patch(`/v1/organization/${world.orgId}`).set('X-API-Key', world.key).send(body).expect(200);
    expect((await patch({ notdienst_bereiche: [' Nord ', 'Süd', 'Nord'] })).body.notdienst_bereiche).toEqual([
      'Nord',
      'Süd',
    ]);
    expect((await patch({ notdienst_bereiche: [] })).body.notdienst_bereiche).toBeNull();
    await patch({ notdienst_bereiche: ['Nord'] });
    expect((await patch({ notdienst_bereiche: null })).body.notdienst_bereiche).toBeNull();
  });

  it('refuses a switch that is not a boolean, naming it, and changes nothing', async () => {
    const world = await ctx.build.world();
    const res = await ctx.http
      .patch(`/v1/organization/${world.orgId}`)
      .set('X-API-Key', world.key)
      .send({ transfer_popup_enabled: 'ja', forward_call_email: true })
      .expect(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'transfer_popup_enabled' })]);
    expect(await ctx.db('organizations').where({ id: world.orgId }).first()).toMatchObject({
      forward_call_email: false,
    });
  });
});

describe('PATCH /v1/organization without an id (older pages)', () => {
  it("changes the API key's organization", async () => {
    const res = await ctx.http
      .patch('/v1/organization')
      .set('X-API-Key', w.key)
      .send({ auto_delete_done_calls: true })
      .expect(200);
    expectSchema(res, OrganizationSchema);
    expect(res.body).toMatchObject({ id: w.orgId, auto_delete_done_calls: true });
  });

  it("takes the key's home organization when its creator reaches several", async () => {
    const world = await ctx.build.world();
    const second = await ctx.build.organization();
    await ctx.build.member(world.userId, second.id, 'developer_admin');
    const res = await ctx.http
      .patch('/v1/organization')
      .set('X-API-Key', world.key)
      .send({ forward_call_email: true })
      .expect(200);
    expect(res.body.id).toBe(world.orgId);
    expect(await ctx.db('organizations').where({ id: second.id }).first()).toMatchObject({
      forward_call_email: false,
    });
  });

  it('asks a dashboard user with several organizations for the id', async () => {
    const world = await ctx.build.world();
    const second = await ctx.build.organization();
    await ctx.build.member(world.userId, second.id, 'admin');
    const res = await ctx.http
      .patch('/v1/organization')
      .set('Authorization', `Bearer ${world.token}`)
      .send({ forward_call_email: true })
      .expect(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'orgId' })]);
  });

  it('is 403 without organization:write', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['organization:read'] });
    const res = await ctx.http.patch('/v1/organization').set('X-API-Key', key.key).send({}).expect(403);
    expect(res.body.error.message).toBe('API key lacks required permission: organization:write');
  });
});
