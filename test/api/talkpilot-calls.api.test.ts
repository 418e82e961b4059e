import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { CallSchema } from '../../src/modules/calls/call.schemas.js';
import { CallPageSchema } from '../../src/modules/calls/call.openapi.js';

// The call detail fields TalkPilot clients read: audio_file_url and final_score.
let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const calls = (agentId = w.agentId) => `/v1/agents/${agentId}/calls`;
const AUDIO = 'https://storage.example.com/recordings/abc.mp3?X-Amz-Expires=3600&X-Amz-Signature=deadbeef';

function intake(body: Record<string, unknown>) {
  return ctx.http
    .post(calls())
    .set('X-API-Key', w.key)
    .send({ duration: 95, phone_number: '+4930123456', transcript: [{ role: 'user', text: 'Hallo' }], ...body });
}

describe('TalkPilot call fields', () => {
  it('returns audio_file_url as stored (not re-signed) and final_score in the call detail', async () => {
    const created = await intake({ call_id: 'lk-audio-1', audio_file_url: AUDIO, final_score: 8.5 }).expect(201);
    expectSchema(created, CallSchema);
    const res = await ctx.http.get(`${calls()}/${created.body.id}`).set('X-API-Key', w.key).expect(200);
    expectSchema(res, CallSchema);
    expect(res.body).toMatchObject({ audio_file_url: AUDIO, final_score: 8.5, duration: 95 });
    expect(typeof res.body.transcript).toBe('string');
  });

  it('keeps the two detail-only fields out of list items, like the transcript', async () => {
    await intake({ call_id: 'lk-audio-2', audio_file_url: AUDIO, final_score: 3 }).expect(201);
    const res = await ctx.http.get(calls()).set('X-API-Key', w.key).expect(200);
    expectSchema(res, CallPageSchema);
    expect(res.body.data.length).toBeGreaterThan(0);
    for (const item of res.body.data) {
      expect(item).not.toHaveProperty('audio_file_url');
      expect(item).not.toHaveProperty('final_score');
      expect(item).not.toHaveProperty('transcript');
    }
  });

  it('answers null for a call reported without them', async () => {
    const created = await intake({ call_id: 'lk-plain' }).expect(201);
    expect(created.body).toMatchObject({ audio_file_url: null, final_score: null });
  });

  it.each([
    [{ final_score: 0 }, 'final_score'],
    [{ final_score: 11 }, 'final_score'],
    [{ audio_file_url: 'ftp://x.example/a.mp3' }, 'audio_file_url'],
  ])('refuses %j at intake, naming the field', async (body, field) => {
    const res = await intake({ call_id: `lk-bad-${field}-${JSON.stringify(body).length}`, ...body }).expect(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field })]);
  });

  it('drops audio_file_url when the retention purge removes personal data', async () => {
    const world = await ctx.build.world();
    const agent = (await ctx.build.agent(world.orgId, { retention_days: 1 })).id;
    ctx.clock.set('2026-03-01T10:00:00Z');
    const created = await ctx.http
      .post(calls(agent))
      .set('X-API-Key', world.key)
      .send({ call_id: 'lk-old', duration: 10, audio_file_url: AUDIO, final_score: 7 })
      .expect(201);
    ctx.clock.set('2026-03-05T10:00:00Z');
    await ctx.internals.callRetention.run();
    const res = await ctx.http
      .get(`${calls(agent)}/${created.body.id}`)
      .set('X-API-Key', world.key)
      .expect(200);
    expect(res.body).toMatchObject({ is_purged: true, audio_file_url: null, final_score: 7 });
  });
});
