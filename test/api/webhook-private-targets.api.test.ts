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
  it.each(['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]', '[::127.0.0.1]', '[::ffff:0:127.0.0.1]'])(
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

  describe('IPv6 forms that embed a non-public IPv4 address', () => {
    const embedded = [
      'http://[::127.0.0.1]:9/hook', // IPv4-compatible
      'http://[::ffff:127.0.0.1]:9/hook', // IPv4-mapped
      'http://[::ffff:0:10.0.0.1]/hook', // IPv4-translated
      'http://[2002:a9fe:a9fe::1]/hook', // 6to4
      'http://[64:ff9b::127.0.0.1]/hook', // NAT64 well-known prefix
      'http://[64:ff9b:1::808:808]/hook', // NAT64 local-use prefix
      'http://[2001:0:a00:1::f7ff:f7f7]/hook', // Teredo
      'http://[2606:4700::5efe:192.168.0.1]/hook', // ISATAP
    ];
    const refused = { message: 'Local and private addresses are not allowed' };

    it.each(embedded)('refuses %s as an agent post_call_webhook_url and keeps the old one', async (url) => {
      const agent = await ctx.build.agent(w.orgId, {});
      const res = await ctx.http
        .patch(`/v1/agents/${agent.id}`)
        .set('X-API-Key', w.key)
        .send({ post_call_webhook_url: url })
        .expect(400);
      expect(res.body.error.details).toEqual([{ field: 'post_call_webhook_url', ...refused }]);
      expect((await ctx.db('agents').where({ id: agent.id }).first()).post_call_webhook_url).toBeNull();
    });

    it.each(embedded)('refuses %s as the /v1/me webhook_url', async (url) => {
      const res = await ctx.http
        .patch('/v1/me')
        .set('Authorization', `Bearer ${w.token}`)
        .send({ webhook_url: url })
        .expect(400);
      expect(res.body.error.details).toEqual([{ field: 'webhook_url', ...refused }]);
      expect((await ctx.db('users').where({ id: w.userId }).first('webhook_url')).webhook_url).toBeNull();
    });

    it.each(embedded)('refuses %s in an http_request tool and an identify_caller tool', async (url) => {
      const agent = await ctx.build.agent(w.orgId, {});
      const post = (body: Record<string, unknown>) =>
        ctx.http
          .post(`/v1/agents/${agent.id}/tools`)
          .set('X-API-Key', w.key)
          .send({ description: 'd', ...body });
      const http = await post({ name: 'h', tool_type: 'http_request', config: { url } }).expect(400);
      expect(http.body.error.details).toEqual([{ field: 'config.url', ...refused }]);
      const identify = await post({
        name: 'i',
        tool_type: 'identify_caller',
        config: { lookup_url: url, fetch_case_url: 'https://crm.example.com/case' },
      }).expect(400);
      expect(identify.body.error.details).toEqual([{ field: 'config.lookup_url', ...refused }]);
      expect(await ctx.db('tools').where({ agent_id: agent.id })).toEqual([]);
    });
  });
});
