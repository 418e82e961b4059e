import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { AgentSchema } from '../../src/modules/agents/agent.schemas.js';

// As in production: WEBHOOK_ALLOW_PRIVATE_TARGETS is off, so local and private targets are refused.
let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext({ config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const patch = (id: string, body: unknown) =>
  ctx.http
    .patch(`/v1/agents/${id}`)
    .set('X-API-Key', w.key)
    .send(body as object);

describe('post_call_webhook_url without private targets allowed', () => {
  it.each([
    'http://127.0.0.1/hook',
    'http://localhost:8080/hook',
    'http://10.1.2.3/hook',
    'http://[::1]/hook',
    'http://169.254.169.254/latest',
    'http://[::ffff:127.0.0.1]/',
  ])('refuses %s on PATCH and keeps the stored URL', async (url) => {
    const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: 'https://hooks.example.com/a' });
    const res = await patch(agent.id, { post_call_webhook_url: url }).expect(400);
    expect(res.body.error.details).toEqual([{ field: 'post_call_webhook_url', message: expect.any(String) }]);
    expect((await ctx.db('agents').where({ id: agent.id }).first()).post_call_webhook_url).toBe(
      'https://hooks.example.com/a',
    );
  });

  it('refuses a private target on create too', async () => {
    const res = await ctx.http
      .post('/v1/agents')
      .set('X-API-Key', w.key)
      .send({ name: 'x', phone_number: ctx.build.phone(), post_call_webhook_url: 'http://192.168.0.10/' })
      .expect(400);
    expect(res.body.error.details[0].field).toBe('post_call_webhook_url');
  });

  it('accepts a public https URL', async () => {
    const res = await patch(w.agentId, { post_call_webhook_url: 'https://hooks.example.com/calls' }).expect(200);
    expectSchema(res, AgentSchema);
    expect(res.body.post_call_webhook_url).toBe('https://hooks.example.com/calls');
  });
});
