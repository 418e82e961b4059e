import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const base = (agentId: string) => `/v1/agents/${agentId}/forwarding-slots`;

type Slot = { id: string; slotnummer: string; cases: string; [k: string]: unknown };

async function freshAgent(): Promise<string> {
  return (await ctx.build.agent(w.orgId, { name: 'Slots Agent' })).id;
}

async function slotsInDb(agentId: string): Promise<{ slotnummer: string; cases: string }[]> {
  return ctx.db('forwarding_slots').where({ agent_id: agentId }).orderBy('slotnummer').select('slotnummer', 'cases');
}

function put(agentId: string, slots: unknown[], key = w.key) {
  return ctx.http.put(base(agentId)).set('X-API-Key', key).send({ slots });
}

describe('GET /v1/agents/{agentId}/forwarding-slots', () => {
  it('returns every slot in slot order inside data, without pagination', async () => {
    const agentId = await freshAgent();
    for (const slotnummer of ['10', '02', '07']) {
      await ctx.http
        .post(base(agentId))
        .set('X-API-Key', w.key)
        .send({ slotnummer, cases: `cases ${slotnummer}` })
        .expect(201);
    }
    const res = await ctx.http.get(base(agentId)).set('X-API-Key', w.key).expect(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(res.body.data.map((s: Slot) => s.slotnummer)).toEqual(['02', '07', '10']);
  });

  it('returns one slot by id', async () => {
    const agentId = await freshAgent();
    const created = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', w.key)
      .send({ slotnummer: '01', cases: 'Heizung' })
      .expect(201);
    const res = await ctx.http
      .get(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(res.body).toEqual(created.body);
  });
});

describe('POST /v1/agents/{agentId}/forwarding-slots', () => {
  it('creates a slot with 201 and returns the whole resource', async () => {
    const agentId = await freshAgent();
    const res = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', w.key)
      .send({
        slotnummer: '03',
        cases: ' Sanitär ',
        slot_belegung: 'Team A',
        prioritaet_1: '+4930111',
        prioritaet_2: '',
        kunde: 'Gewerbe',
      })
      .expect(201);
    expect(res.body).toMatchObject({
      agent_id: agentId,
      slotnummer: '03',
      cases: 'Sanitär',
      slot_belegung: 'Team A',
      prioritaet_1: '+4930111',
      prioritaet_2: null,
      prioritaet_3: null,
      kunde: 'Gewerbe',
    });
    expect(res.body.id).toEqual(expect.any(String));
    expect(res.body.created_at).toEqual(expect.any(String));
  });

  it('refuses a slotnummer the agent already uses with 409 and keeps the existing slot', async () => {
    const agentId = await freshAgent();
    await ctx.http.post(base(agentId)).set('X-API-Key', w.key).send({ slotnummer: '05', cases: 'first' }).expect(201);
    const res = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', w.key)
      .send({ slotnummer: '05', cases: 'second' })
      .expect(409);
    expect(res.body.error.code).toBe('CONFLICT');
    expect(await slotsInDb(agentId)).toEqual([{ slotnummer: '05', cases: 'first' }]);
  });

  it('lets two agents use the same slotnummer', async () => {
    const [a, b] = [await freshAgent(), await freshAgent()];
    await ctx.http.post(base(a)).set('X-API-Key', w.key).send({ slotnummer: '01', cases: 'x' }).expect(201);
    await ctx.http.post(base(b)).set('X-API-Key', w.key).send({ slotnummer: '01', cases: 'x' }).expect(201);
  });

  it('lists every problem of an invalid slot and writes nothing', async () => {
    const agentId = await freshAgent();
    const res = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', w.key)
      .send({ slotnummer: '1', prioritaet_1: 5 })
      .expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'cases',
      'prioritaet_1',
      'slotnummer',
    ]);
    expect(await slotsInDb(agentId)).toEqual([]);
  });
});

describe('PATCH /v1/agents/{agentId}/forwarding-slots/{slotId}', () => {
  it('changes the given fields, ignores unknown ones and returns the slot', async () => {
    const agentId = await freshAgent();
    const created = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', w.key)
      .send({ slotnummer: '01', cases: 'a', kunde: 'K' })
      .expect(201);
    ctx.clock.advance(1000);
    const res = await ctx.http
      .patch(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .send({ slotnummer: '02', prioritaet_3: 'Zentrale', kunde: null, agent_id: UNKNOWN, whatever: 1 })
      .expect(200);
    expect(res.body).toMatchObject({
      id: created.body.id,
      agent_id: agentId,
      slotnummer: '02',
      cases: 'a',
      prioritaet_3: 'Zentrale',
      kunde: null,
    });
    expect(new Date(res.body.updated_at).getTime()).toBeGreaterThan(new Date(created.body.updated_at).getTime());
  });

  it('refuses to move a slot onto a taken slotnummer with 409 and changes nothing', async () => {
    const agentId = await freshAgent();
    await ctx.http.post(base(agentId)).set('X-API-Key', w.key).send({ slotnummer: '01', cases: 'one' }).expect(201);
    const two = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', w.key)
      .send({ slotnummer: '02', cases: 'two' })
      .expect(201);
    await ctx.http
      .patch(`${base(agentId)}/${two.body.id}`)
      .set('X-API-Key', w.key)
      .send({ slotnummer: '01', cases: 'changed' })
      .expect(409);
    expect(await slotsInDb(agentId)).toEqual([
      { slotnummer: '01', cases: 'one' },
      { slotnummer: '02', cases: 'two' },
    ]);
  });

  it('refuses an empty cases field with 400 and keeps the slot', async () => {
    const agentId = await freshAgent();
    const one = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', w.key)
      .send({ slotnummer: '01', cases: 'one' })
      .expect(201);
    const res = await ctx.http
      .patch(`${base(agentId)}/${one.body.id}`)
      .set('X-API-Key', w.key)
      .send({ cases: '  ' })
      .expect(400);
    expect(res.body.error.details).toEqual([{ field: 'cases', message: 'Must not be empty' }]);
    expect(await slotsInDb(agentId)).toEqual([{ slotnummer: '01', cases: 'one' }]);
  });
});

describe('DELETE /v1/agents/{agentId}/forwarding-slots/{slotId}', () => {
  it('deletes the slot with 204 and no body; a second delete is 404', async () => {
    const agentId = await freshAgent();
    const one = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', w.key)
      .send({ slotnummer: '01', cases: 'one' })
      .expect(201);
    const res = await ctx.http
      .delete(`${base(agentId)}/${one.body.id}`)
      .set('X-API-Key', w.key)
      .expect(204);
    expect(res.text).toBe('');
    expect(await slotsInDb(agentId)).toEqual([]);
    await ctx.http
      .delete(`${base(agentId)}/${one.body.id}`)
      .set('X-API-Key', w.key)
      .expect(404);
  });
});

describe('PUT /v1/agents/{agentId}/forwarding-slots', () => {
  it('replaces every slot and reports how many were removed', async () => {
    const agentId = await freshAgent();
    await put(agentId, [
      { slotnummer: '01', cases: 'old 1' },
      { slotnummer: '02', cases: 'old 2' },
      { slotnummer: '03', cases: 'old 3' },
    ]).expect(200);
    const res = await put(agentId, [
      { slotnummer: '09', cases: 'new 9', prioritaet_3: 'P3', kunde: 'Privat' },
      { slotnummer: '04', cases: 'new 4', slot_belegung: 'Max', prioritaet_1: 'A', prioritaet_2: 'B' },
    ]).expect(200);
    expect(res.body.replaced_count).toBe(3);
    expect(res.body.data.map((s: Slot) => [s.slotnummer, s.cases])).toEqual([
      ['04', 'new 4'],
      ['09', 'new 9'],
    ]);
    expect(res.body.data[1]).toMatchObject({ prioritaet_3: 'P3', kunde: 'Privat', agent_id: agentId });
    expect(await slotsInDb(agentId)).toEqual([
      { slotnummer: '04', cases: 'new 4' },
      { slotnummer: '09', cases: 'new 9' },
    ]);
  });

  it('takes back the rows of a GET unchanged (ids and timestamps are ignored)', async () => {
    const agentId = await freshAgent();
    await put(agentId, [{ slotnummer: '01', cases: 'one' }]).expect(200);
    const got = await ctx.http.get(base(agentId)).set('X-API-Key', w.key).expect(200);
    const res = await put(agentId, got.body.data).expect(200);
    expect(res.body.replaced_count).toBe(1);
    expect(res.body.data.map((s: Slot) => s.cases)).toEqual(['one']);
  });

  it('removes every slot with an empty list', async () => {
    const agentId = await freshAgent();
    await put(agentId, [
      { slotnummer: '01', cases: 'one' },
      { slotnummer: '02', cases: 'two' },
    ]).expect(200);
    const res = await put(agentId, []).expect(200);
    expect(res.body).toEqual({ data: [], replaced_count: 2 });
  });

  it('lists the problems of every row at once, as slots[i].field, and keeps the old slots', async () => {
    const agentId = await freshAgent();
    await put(agentId, [{ slotnummer: '01', cases: 'keep me' }]).expect(200);
    const res = await put(agentId, [
      { slotnummer: '01', cases: 'ok' },
      { slotnummer: '02' },
      { slotnummer: 'x2', cases: 'bad number' },
      { slotnummer: '01', cases: 'duplicate' },
      { cases: 'no number' },
    ]).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([
      { field: 'slots[1].cases', message: 'Required' },
      { field: 'slots[2].slotnummer', message: 'Must be two digits, e.g. 01' },
      { field: 'slots[3].slotnummer', message: 'Duplicate slotnummer 01 (also in slots[0])' },
      { field: 'slots[4].slotnummer', message: 'Required' },
    ]);
    expect(await slotsInDb(agentId)).toEqual([{ slotnummer: '01', cases: 'keep me' }]);
  });

  it('refuses more than 100 rows and a body without slots', async () => {
    const agentId = await freshAgent();
    const tooMany = Array.from({ length: 101 }, (_, i) => ({
      slotnummer: String(i % 100).padStart(2, '0'),
      cases: 'c',
    }));
    const many = await put(agentId, tooMany).expect(400);
    expect(many.body.error.details).toContainEqual({ field: 'slots', message: 'At most 100 slots' });
    const missing = await ctx.http.put(base(agentId)).set('X-API-Key', w.key).send({}).expect(400);
    expect(missing.body.error.details).toEqual([{ field: 'slots', message: 'Required' }]);
    expect(await slotsInDb(agentId)).toEqual([]);
  });

  it('accepts exactly 100 rows', async () => {
    const agentId = await freshAgent();
    const all = Array.from({ length: 100 }, (_, i) => ({ slotnummer: String(i).padStart(2, '0'), cases: `c${i}` }));
    const res = await put(agentId, all).expect(200);
    expect(res.body.data).toHaveLength(100);
  });

  it('serialises concurrent replacements: the result is exactly one payload, never a mix', async () => {
    const agentId = await freshAgent();
    const initial = Array.from({ length: 7 }, (_, i) => ({ slotnummer: `9${i}`, cases: 'initial' }));
    await put(agentId, initial).expect(200);
    // Payload p has p+1 slots with numbers p0, p1, ... so any mix of two payloads is visible.
    const payloads = Array.from({ length: 6 }, (_, p) =>
      Array.from({ length: p + 1 }, (_, i) => ({ slotnummer: `${p}${i}`, cases: `payload ${p}` })),
    );
    for (let round = 0; round < 3; round++) {
      const before = (await slotsInDb(agentId)).length;
      const responses = await Promise.all(payloads.map((slots) => put(agentId, slots)));
      expect(responses.map((r) => r.status)).toEqual(payloads.map(() => 200));

      const final = await slotsInDb(agentId);
      const winner = payloads.find(
        (p) => p.length === final.length && p.every((s, i) => final[i]!.slotnummer === s.slotnummer),
      );
      expect(winner).toBeDefined();
      expect(final).toEqual(winner!.map(({ slotnummer, cases }) => ({ slotnummer, cases })));
      expect(new Set(final.map((s) => s.cases)).size).toBe(1);

      // One after the other: each removed exactly what the one before it had written.
      const removed = responses.map((r) => r.body.replaced_count as number).sort((a, b) => a - b);
      const expected = [before, ...payloads.filter((p) => p !== winner).map((p) => p.length)].sort((a, b) => a - b);
      expect(removed).toEqual(expected);
    }
  });
});

describe('forwarding slot access', () => {
  it('is 403 FORBIDDEN naming forwarding:write for a read-only key, and writes nothing', async () => {
    const agentId = await freshAgent();
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['forwarding:read'] });
    await ctx.http.get(base(agentId)).set('X-API-Key', key.key).expect(200);
    const res = await put(agentId, [{ slotnummer: '01', cases: 'x' }], key.key).expect(403);
    expect(res.body.error).toMatchObject({
      code: 'FORBIDDEN',
      message: 'API key lacks required permission: forwarding:write',
    });
    const post = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', key.key)
      .send({ slotnummer: '01', cases: 'x' })
      .expect(403);
    expect(post.body.error.code).toBe('FORBIDDEN');
    expect(await slotsInDb(agentId)).toEqual([]);
  });

  it('is 403 FORBIDDEN naming forwarding:read for a key without it', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
    const res = await ctx.http.get(base(w.agentId)).set('X-API-Key', key.key).expect(403);
    expect(res.body.error.message).toBe('API key lacks required permission: forwarding:read');
  });

  it('is 403 AGENT_NOT_ACCESSIBLE for an agent outside the key scope, and writes nothing', async () => {
    const agentId = await freshAgent();
    await put(agentId, [{ slotnummer: '01', cases: 'keep' }]).expect(200);
    const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    const get = await ctx.http.get(base(agentId)).set('X-API-Key', key.key).expect(403);
    expect(get.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    const res = await put(agentId, [], key.key).expect(403);
    expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    expect(await slotsInDb(agentId)).toEqual([{ slotnummer: '01', cases: 'keep' }]);
  });

  it('is 404 for an agent of another organization and writes nothing', async () => {
    const other = await ctx.build.world();
    await put(other.agentId, [{ slotnummer: '01', cases: 'theirs' }], other.key).expect(200);
    await ctx.http.get(base(other.agentId)).set('X-API-Key', w.key).expect(404);
    const res = await put(other.agentId, [], w.key).expect(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    await ctx.http.get(base(UNKNOWN)).set('X-API-Key', w.key).expect(404);
    expect(await slotsInDb(other.agentId)).toEqual([{ slotnummer: '01', cases: 'theirs' }]);
  });

  it('is 404 for a slot of another agent, on read, update and delete, and changes nothing', async () => {
    const owner = await freshAgent();
    const other = await freshAgent();
    const slot = await ctx.http
      .post(base(owner))
      .set('X-API-Key', w.key)
      .send({ slotnummer: '01', cases: 'mine' })
      .expect(201);
    await ctx.http
      .get(`${base(other)}/${slot.body.id}`)
      .set('X-API-Key', w.key)
      .expect(404);
    await ctx.http
      .patch(`${base(other)}/${slot.body.id}`)
      .set('X-API-Key', w.key)
      .send({ cases: 'stolen' })
      .expect(404);
    const res = await ctx.http
      .delete(`${base(other)}/${slot.body.id}`)
      .set('X-API-Key', w.key)
      .expect(404);
    expect(res.body.error.message).toBe('Forwarding slot not found');
    expect(await slotsInDb(owner)).toEqual([{ slotnummer: '01', cases: 'mine' }]);
  });

  it('is 400 naming the malformed path parameter', async () => {
    const a = await ctx.http.get('/v1/agents/nope/forwarding-slots').set('X-API-Key', w.key).expect(400);
    expect(a.body.error.details).toEqual([{ field: 'agentId', message: 'Must be a UUID' }]);
    const b = await ctx.http
      .patch(`${base(w.agentId)}/nope`)
      .set('X-API-Key', w.key)
      .send({ cases: 'x' })
      .expect(400);
    expect(b.body.error.details).toEqual([{ field: 'slotId', message: 'Must be a UUID' }]);
  });

  it('lets a member read with a dashboard token but not write', async () => {
    const member = await ctx.build.user(w.orgId, 'member');
    const token = ctx.build.token(member.id);
    await ctx.http.get(base(w.agentId)).set('Authorization', `Bearer ${token}`).expect(200);
    const res = await ctx.http
      .put(base(w.agentId))
      .set('Authorization', `Bearer ${token}`)
      .send({ slots: [] })
      .expect(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it('answers 405 for a method the path does not have', async () => {
    await ctx.http.delete(base(w.agentId)).set('X-API-Key', w.key).expect(405);
  });
});
