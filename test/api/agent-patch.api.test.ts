import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { AgentSchema } from '../../src/modules/agents/agent.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  // Many requests in one file: a key whose rate limit never gets in the way.
});
afterAll(() => ctx.close());

const stored = (id: string) => ctx.db('agents').where({ id }).first();
const patch = (id: string, body: unknown, key = w.key) =>
  ctx.http
    .patch(`/v1/agents/${id}`)
    .set('X-API-Key', key)
    .send(body as object);
const newAgent = async (fields: Record<string, unknown> = {}) => (await ctx.build.agent(w.orgId, fields)).id;

/** Refused with 400 naming `field`, and the stored agent is exactly as before. */
async function expectRefused(body: Record<string, unknown>, field: string) {
  const id = await newAgent();
  const before = await stored(id);
  const res = await patch(id, body).expect(400);
  expect(res.body.error.code).toBe('VALIDATION_ERROR');
  expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  expect(await stored(id)).toEqual(before);
}

async function expectAccepted(body: Record<string, unknown>) {
  const id = await newAgent();
  const res = await patch(id, body).expect(200);
  expectSchema(res, AgentSchema);
  for (const [key, value] of Object.entries(body)) expect(res.body[key]).toEqual(value);
  const row = await stored(id);
  for (const [key, value] of Object.entries(body)) expect(row[key]).toEqual(value);
}

describe('PATCH /v1/agents/{agentId}', () => {
  it('writes every writable field at once and answers 200 with the full agent', async () => {
    const id = await newAgent();
    const backup = await newAgent({ name: 'Backup' });
    ctx.clock.set('2026-11-23T10:00:00Z');
    const body = {
      name: 'Empfang',
      is_active: false,
      language: 'en',
      formality: 'informal',
      llm_provider: 'openai',
      llm_model: 'gpt-4o',
      llm_temperature: 0.7,
      tts_provider: 'elevenlabs',
      voice_id: 'voice-1',
      realtime_voice: 'alloy',
      speaking_rate: 1.2,
      stt_provider: 'deepgram',
      stt_keywords: ['Müller', 'Rohrbruch'],
      prompt: 'Du bist der Empfang.',
      greeting: 'Guten Tag',
      greeting_variants: [{ greeting: 'Hallo {{vorname}}', tag: 'vip' }],
      post_call_webhook_url: 'https://hooks.example.com/calls',
      schedule: {
        timezone: 'Europe/Berlin',
        rules: [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }],
      },
      backup_agent_id: backup,
      bundesland: 'NRW',
      allow_greeting_interruption: true,
      short_calls_auto_edit: true,
      track_caller_name: true,
      transfer_timeout_seconds: 20,
      background_audio_enabled: true,
      background_audio_type: 'cafe',
      background_audio_volume: 0.3,
      thinking_sound_enabled: true,
      thinking_sound_volume: 0.2,
      aic_enhancement_enabled: true,
    };
    const res = await patch(id, body).expect(200);
    expectSchema(res, AgentSchema);
    expect(res.body).toMatchObject({ ...body, id, organization_id: w.orgId, updated_at: '2026-11-23T10:00:00.000Z' });
    expect(res.body).not.toHaveProperty('workflow');
    const get = await ctx.http.get(`/v1/agents/${id}`).set('X-API-Key', w.key).expect(200);
    expectSchema(get, AgentSchema);
    expect(get.body).toEqual(res.body);
  });

  it('changes only the fields sent', async () => {
    const id = await newAgent({ language: 'de', greeting: 'Hallo' });
    const res = await patch(id, { greeting: 'Moin' }).expect(200);
    expectSchema(res, AgentSchema);
    expect(res.body).toMatchObject({ greeting: 'Moin', language: 'de', name: 'Agent' });
  });

  it('accepts an empty body and changes nothing', async () => {
    const id = await newAgent();
    const before = await stored(id);
    await patch(id, {}).expect(200);
    expect(await stored(id)).toEqual(before);
  });

  it.each([
    [{ name: 'x'.repeat(255) }],
    [{ name: 'ü'.repeat(255) }],
    [{ llm_temperature: 0 }],
    [{ llm_temperature: 2 }],
    [{ speaking_rate: 0.5 }],
    [{ speaking_rate: 2 }],
    [{ transfer_timeout_seconds: 5 }],
    [{ transfer_timeout_seconds: 45 }],
    [{ background_audio_volume: 0 }],
    [{ background_audio_volume: 1 }],
    [{ thinking_sound_volume: 0 }],
    [{ thinking_sound_volume: 1 }],
    [{ stt_keywords: Array.from({ length: 100 }, (_, i) => `kw${i}`) }],
    [{ greeting: 'ß'.repeat(2000) }],
    [{ prompt: '' }],
    [{ language: null, formality: null, llm_provider: null, tts_provider: null, stt_provider: null }],
    [{ llm_temperature: null, speaking_rate: null, transfer_timeout_seconds: null, stt_keywords: null }],
    [{ greeting: null, greeting_variants: null, post_call_webhook_url: null, schedule: null, backup_agent_id: null }],
    [{ allow_greeting_interruption: null, llm_model: null, voice_id: null, realtime_voice: null }],
    [{ bundesland: 'NW' }],
    [{ bundesland: 'DE' }],
  ])('accepts the boundary value %j', async (body) => {
    await expectAccepted(body);
  });

  it('accepts a prompt of 50,000 multi-byte characters and refuses 50,001', async () => {
    const id = await newAgent();
    const prompt = '😀'.repeat(49_999) + 'ä';
    const res = await patch(id, { prompt }).expect(200);
    expect([...res.body.prompt]).toHaveLength(50_000);
    expect((await stored(id)).prompt).toBe(prompt);
    await expectRefused({ prompt: '😀'.repeat(50_001) }, 'prompt');
    await expectRefused({ prompt: 'ä'.repeat(50_001) }, 'prompt');
  });

  it.each([
    [{ name: '' }, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 'x'.repeat(256) }, 'name'],
    [{ name: null }, 'name'],
    [{ is_active: 'yes' }, 'is_active'],
    [{ is_active: null }, 'is_active'],
    [{ language: 'it' }, 'language'],
    [{ formality: 'casual' }, 'formality'],
    [{ llm_provider: 'anthropic' }, 'llm_provider'],
    [{ llm_temperature: -0.01 }, 'llm_temperature'],
    [{ llm_temperature: 2.01 }, 'llm_temperature'],
    [{ llm_temperature: '1' }, 'llm_temperature'],
    [{ tts_provider: 'polly' }, 'tts_provider'],
    [{ speaking_rate: 0.49 }, 'speaking_rate'],
    [{ speaking_rate: 2.01 }, 'speaking_rate'],
    [{ stt_provider: 'whisper' }, 'stt_provider'],
    [{ stt_keywords: Array.from({ length: 101 }, (_, i) => `kw${i}`) }, 'stt_keywords'],
    [{ stt_keywords: ['ok', 7] }, 'stt_keywords[1]'],
    [{ stt_keywords: ['ok', ''] }, 'stt_keywords[1]'],
    [{ prompt: null }, 'prompt'],
    [{ prompt: 'a\u0000b' }, 'prompt'],
    [{ greeting: 'ß'.repeat(2001) }, 'greeting'],
    [{ transfer_timeout_seconds: 4 }, 'transfer_timeout_seconds'],
    [{ transfer_timeout_seconds: 46 }, 'transfer_timeout_seconds'],
    [{ transfer_timeout_seconds: 10.5 }, 'transfer_timeout_seconds'],
    [{ bundesland: 'XX' }, 'bundesland'],
    [{ bundesland: null }, 'bundesland'],
    [{ background_audio_type: 'beach' }, 'background_audio_type'],
    [{ background_audio_volume: -0.1 }, 'background_audio_volume'],
    [{ background_audio_volume: 1.1 }, 'background_audio_volume'],
    [{ thinking_sound_volume: 1.01 }, 'thinking_sound_volume'],
    [{ thinking_sound_volume: -1 }, 'thinking_sound_volume'],
    [{ short_calls_auto_edit: null }, 'short_calls_auto_edit'],
    [{ track_caller_name: 1 }, 'track_caller_name'],
    [{ aic_enhancement_enabled: 'true' }, 'aic_enhancement_enabled'],
    [{ background_audio_enabled: null }, 'background_audio_enabled'],
    [{ thinking_sound_enabled: null }, 'thinking_sound_enabled'],
    [{ allow_greeting_interruption: 'no' }, 'allow_greeting_interruption'],
    [{ llm_model: '' }, 'llm_model'],
    [{ backup_agent_id: 'nope' }, 'backup_agent_id'],
  ])('refuses %j naming %s and keeps the stored agent', async (body, field) => {
    await expectRefused(body, field);
  });

  it('refuses unknown and read-only fields with one detail per field and writes nothing', async () => {
    const id = await newAgent();
    const before = await stored(id);
    const res = await patch(id, {
      name: 'Valid name',
      id: '00000000-0000-4000-8000-000000000000',
      organization_id: w.orgId,
      phone_number: '+4930000000',
      retention_days: 30,
      metadata: {},
      created_at: '2020-01-01T00:00:00Z',
      updated_at: '2020-01-01T00:00:00Z',
      workflow: null,
      colour: 'blue',
      toString: 'x',
    }).expect(400);
    const details: { field: string; message: string }[] = res.body.error.details;
    expect(details).toHaveLength(10);
    for (const f of [
      'id',
      'organization_id',
      'phone_number',
      'retention_days',
      'metadata',
      'created_at',
      'updated_at',
      'workflow',
    ]) {
      expect(details).toContainEqual({ field: f, message: 'Field is read-only' });
    }
    expect(details).toContainEqual({ field: 'colour', message: 'Unknown field' });
    expect(details).toContainEqual({ field: 'toString', message: 'Unknown field' });
    expect(await stored(id)).toEqual(before);
  });

  it('lists every problem of a request at once', async () => {
    const id = await newAgent();
    const res = await patch(id, { name: '', llm_temperature: 3, colour: 'x', backup_agent_id: id }).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'backup_agent_id',
      'colour',
      'llm_temperature',
      'name',
    ]);
  });

  describe('greeting_variants', () => {
    it('accepts each kind of condition, alone and combined', async () => {
      await expectAccepted({
        greeting_variants: [
          { greeting: 'A', tag: 'vip' },
          { greeting: 'B', from: '22:00', to: '06:00' },
          { greeting: 'C', min_calls_today: 1 },
          { greeting: 'D {{vorname}}', tag: 'x', from: '00:00', to: '23:59', min_calls_today: 3 },
        ],
      });
    });

    it.each([
      [[{ greeting: 'No condition' }], 'greeting_variants[0]'],
      [[{ tag: 'vip' }], 'greeting_variants[0].greeting'],
      [[{ greeting: '', tag: 'vip' }], 'greeting_variants[0].greeting'],
      [[{ greeting: 'ß'.repeat(2001), tag: 'vip' }], 'greeting_variants[0].greeting'],
      [
        [
          { greeting: 'A', tag: 'vip' },
          { greeting: 'B', from: '08:00' },
        ],
        'greeting_variants[1].to',
      ],
      [[{ greeting: 'B', to: '08:00' }], 'greeting_variants[0].from'],
      [[{ greeting: 'B', from: '24:00', to: '08:00' }], 'greeting_variants[0].from'],
      [[{ greeting: 'B', from: '8:00', to: '09:00' }], 'greeting_variants[0].from'],
      [[{ greeting: 'B', from: '08:00', to: '12:60' }], 'greeting_variants[0].to'],
      [[{ greeting: 'C', min_calls_today: 0 }], 'greeting_variants[0].min_calls_today'],
      [[{ greeting: 'C', min_calls_today: 1.5 }], 'greeting_variants[0].min_calls_today'],
      [[{ greeting: 'D', tag: 'vip', priority: 1 }], 'greeting_variants[0].priority'],
      [[{ greeting: 'E', tag: '' }], 'greeting_variants[0].tag'],
      ['not a list', 'greeting_variants'],
    ])('refuses %j naming %s', async (variants, field) => {
      await expectRefused({ greeting_variants: variants }, field);
    });
  });

  describe('schedule', () => {
    const rule = { days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' };

    it('accepts an IANA zone, 24:00 as an end and a rule past midnight', async () => {
      await expectAccepted({
        schedule: {
          timezone: 'America/New_York',
          rules: [rule, { days: [0, 6], start_time: '22:00', end_time: '06:00' }],
        },
      });
      await expectAccepted({
        schedule: { timezone: 'Europe/Berlin', rules: [{ days: [6], start_time: '18:00', end_time: '24:00' }] },
      });
      await expectAccepted({ schedule: { timezone: 'UTC', rules: [] } });
    });

    it.each([
      [{ timezone: 'Europe/Atlantis', rules: [rule] }, 'schedule.timezone'],
      [{ timezone: '+01:00', rules: [rule] }, 'schedule.timezone'],
      [{ rules: [rule] }, 'schedule.timezone'],
      [{ timezone: 'Europe/Berlin' }, 'schedule.rules'],
      [{ timezone: 'Europe/Berlin', rules: [{ ...rule, days: [] }] }, 'schedule.rules[0].days'],
      [{ timezone: 'Europe/Berlin', rules: [{ ...rule, days: [1, 7] }] }, 'schedule.rules[0].days[1]'],
      [{ timezone: 'Europe/Berlin', rules: [{ ...rule, days: [-1] }] }, 'schedule.rules[0].days[0]'],
      [{ timezone: 'Europe/Berlin', rules: [{ ...rule, days: [1, 2, 1] }] }, 'schedule.rules[0].days[2]'],
      [{ timezone: 'Europe/Berlin', rules: [{ ...rule, start_time: '24:00' }] }, 'schedule.rules[0].start_time'],
      [{ timezone: 'Europe/Berlin', rules: [{ ...rule, end_time: '24:01' }] }, 'schedule.rules[0].end_time'],
      [{ timezone: 'Europe/Berlin', rules: [{ ...rule, start_time: '25:00' }] }, 'schedule.rules[0].start_time'],
      [{ timezone: 'Europe/Berlin', rules: [{ ...rule, end_time: '9:00' }] }, 'schedule.rules[0].end_time'],
      [{ timezone: 'Europe/Berlin', rules: [{ days: [1], start_time: '08:00' }] }, 'schedule.rules[0].end_time'],
      [{ timezone: 'Europe/Berlin', rules: [{ ...rule, note: 'x' }] }, 'schedule.rules[0].note'],
      [{ timezone: 'Europe/Berlin', rules: [rule], holidays: true }, 'schedule.holidays'],
    ])('refuses %j naming %s', async (schedule, field) => {
      await expectRefused({ schedule }, field);
    });
  });

  describe('post_call_webhook_url', () => {
    it('accepts http and https URLs', async () => {
      await expectAccepted({ post_call_webhook_url: 'https://example.com/hook?x=1' });
      await expectAccepted({ post_call_webhook_url: 'http://example.com/hook' });
    });

    it.each(['ftp://example.com/hook', 'not a url', 'https://user:pass@example.com/', 'javascript:alert(1)'])(
      'refuses %s',
      async (url) => {
        await expectRefused({ post_call_webhook_url: url }, 'post_call_webhook_url');
      },
    );
  });

  describe('backup_agent_id', () => {
    it('accepts another agent of the same organization', async () => {
      const backup = await newAgent({ name: 'Backup' });
      await expectAccepted({ backup_agent_id: backup });
    });

    it('refuses the agent itself', async () => {
      const id = await newAgent();
      const before = await stored(id);
      const res = await patch(id, { backup_agent_id: id }).expect(400);
      expect(res.body.error.details).toEqual([
        { field: 'backup_agent_id', message: 'An agent cannot be its own backup' },
      ]);
      expect(await stored(id)).toEqual(before);
    });

    it('refuses an agent of another organization and an unknown id', async () => {
      const other = await ctx.build.world();
      await expectRefused({ backup_agent_id: other.agentId }, 'backup_agent_id');
      await expectRefused({ backup_agent_id: '00000000-0000-4000-8000-000000000000' }, 'backup_agent_id');
    });

    it('refuses an agent outside the scope of a restricted key', async () => {
      const id = await newAgent();
      const hidden = await newAgent({ name: 'Hidden' });
      const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [id] });
      const res = await patch(id, { backup_agent_id: hidden }, key.key).expect(400);
      expect(res.body.error.details[0].field).toBe('backup_agent_id');
    });
  });

  describe('access', () => {
    it('is 403 FORBIDDEN naming agents:write for a key that may only read, before validating the body', async () => {
      const id = await newAgent();
      const before = await stored(id);
      const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
      const res = await patch(id, { name: 'x', colour: 'red' }, key.key).expect(403);
      expect(res.body.error).toMatchObject({
        code: 'FORBIDDEN',
        message: 'API key lacks required permission: agents:write',
      });
      expect(await stored(id)).toEqual(before);
    });

    it('is 403 for a dashboard member and 200 for an admin', async () => {
      const id = await newAgent();
      const member = await ctx.build.user(w.orgId, 'member');
      await ctx.http
        .patch(`/v1/agents/${id}`)
        .set('Authorization', `Bearer ${ctx.build.token(member.id)}`)
        .send({ name: 'x' })
        .expect(403);
      const admin = await ctx.build.user(w.orgId, 'admin');
      await ctx.http
        .patch(`/v1/agents/${id}`)
        .set('Authorization', `Bearer ${ctx.build.token(admin.id)}`)
        .send({ name: 'Neu' })
        .expect(200);
    });

    it('is 403 AGENT_NOT_ACCESSIBLE outside the key scope and writes nothing', async () => {
      const id = await newAgent();
      const before = await stored(id);
      const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
      const res = await patch(id, { name: 'x' }, key.key).expect(403);
      expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
      expect(await stored(id)).toEqual(before);
    });

    it('is 404 for an agent of another organization and writes nothing', async () => {
      const other = await ctx.build.world();
      const before = await stored(other.agentId);
      const res = await patch(other.agentId, { name: 'x' }).expect(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
      expect(await stored(other.agentId)).toEqual(before);
    });

    it('is 400 naming agentId when it is not a UUID', async () => {
      const res = await patch('nope', { name: 'x' }).expect(400);
      expect(res.body.error.details).toEqual([{ field: 'agentId', message: 'Must be a UUID' }]);
    });

    it('is 400 for a body that is not a JSON object', async () => {
      const id = await newAgent();
      await ctx.http
        .patch(`/v1/agents/${id}`)
        .set('X-API-Key', w.key)
        .set('Content-Type', 'application/json')
        .send('[1]')
        .expect(400);
    });
  });
});
