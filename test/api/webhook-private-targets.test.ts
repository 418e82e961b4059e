import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

// As in production: WEBHOOK_ALLOW_PRIVATE_TARGETS is off. The only receiver is on loopback and must see nothing.
let ctx: TestContext;
let w: World;
let receiver: Receiver;
beforeAll(async () => {
  ctx = await createTestContext({ config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
  w = await ctx.build.world();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await ctx.close();
});

describe('with private targets not allowed', () => {
  it.each(['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]'])(
    'refuses a delivery to %s when connecting, records it, and sends nothing',
    async (host) => {
      const url = receiver.url('ok', host);
      // Written directly: the save-time check would have refused it; the connect-time check must too.
      const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
      await ctx.db.transaction((trx) =>
        ctx.internals.events.record(trx, {
          organization_id: w.orgId,
          agent_id: agent.id,
          type: 'call.completed',
          payload: { call: {} },
        }),
      );
      await ctx.internals.webhookWorker.drain();

      expect(receiver.received).toEqual([]);
      const res = await ctx.http.get(`/v1/agents/${agent.id}/webhook-deliveries`).set('X-API-Key', w.key).expect(200);
      expect(res.body.data[0]).toMatchObject({ status: 'failed', http_status: null, attempt_count: 1 });
      expect(res.body.data[0].error).toMatch(/^Refused: /);
    },
  );

  it.each([
    'http://127.0.0.1/hook',
    'http://localhost:8080/hook',
    'http://10.1.2.3/hook',
    'http://[::ffff:192.168.0.1]/hook',
  ])('refuses %s as a webhook URL on /v1/me and keeps the old one', async (url) => {
    const res = await ctx.http
      .patch('/v1/me')
      .set('Authorization', `Bearer ${w.token}`)
      .send({ webhook_url: url })
      .expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'webhook_url', message: 'Local and private addresses are not allowed' },
    ]);
    expect((await ctx.db('users').where({ id: w.userId }).first('webhook_url')).webhook_url).toBeNull();
  });
});
