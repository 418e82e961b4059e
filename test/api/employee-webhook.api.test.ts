import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import type { World } from '../support/builders.js';
import { startReceiver } from '../support/webhook-receiver.js';

let ctx: TestContext;
let w: World;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await ctx.close();
});

describe('employee status change end to end', () => {
  it('delivers employee.forwarding_created, signed, to the webhook URL a member set on /v1/me', async () => {
    const url = receiver.url('ok');
    const bearer = { Authorization: `Bearer ${w.token}` };
    await ctx.http.patch('/v1/me').set(bearer).send({ webhook_url: url }).expect(200);
    const { body: employee } = await ctx.http
      .post(`/v1/agents/${w.agentId}/employees`)
      .set('X-API-Key', w.key)
      .send({ name: 'Erika Muster', phone_number: '+4930123456', email: 'erika@example.com' })
      .expect(201);
    await ctx.http
      .patch(`/v1/agents/${w.agentId}/employees/${employee.id}`)
      .set('X-API-Key', w.key)
      .send({ status: 'urlaub', substitute: 'Max Mustermann', reasons: ['Urlaub'] })
      .expect(200);

    const arrived = receiver.nextRequestTo(url);
    await ctx.internals.webhookWorker.drain();
    const request = await arrived;
    const body = JSON.parse(request.body);
    expect(body).toMatchObject({
      event: 'employee.forwarding_created',
      employee: { name: 'Erika Muster', phone_number: '+4930123456', email: 'erika@example.com' },
      agents: ['Main Agent'],
      substitute: 'Max Mustermann',
      reasons: ['Urlaub'],
    });
    expect(request.headers['webhook-id']).toBeTruthy();
    expect(request.headers['webhook-signature']).toMatch(/^v1,/);

    const log = await ctx.http.get(`/v1/agents/${w.agentId}/webhook-deliveries`).set('X-API-Key', w.key).expect(200);
    expect(
      log.body.data.some(
        (d: { event_type?: string; event?: string }) => (d.event_type ?? d.event) === 'employee.forwarding_created',
      ),
    ).toBe(true);
  });
});
