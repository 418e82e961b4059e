import { gzipSync } from 'node:zlib';
import http from 'node:http';
import net from 'node:net';
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

const agentPath = () => `/v1/agents/${w.agentId}`;
const expectEnvelope = (body: { error?: { code?: unknown; message?: unknown } }, code = 'VALIDATION_ERROR') => {
  expect(body.error).toMatchObject({ code, message: expect.any(String) });
};
const countRows = async (table: string) =>
  Number((await ctx.db(table).where({ agent_id: w.agentId }).count({ n: '*' }).first())?.n ?? 0);

describe('the text rule: NUL and lone surrogates', () => {
  it.each([
    ['employees', { name: 'Er\u0000ika' }, 'name'],
    ['contacts', { customer_name: 'Max', note: 'a\u0000b' }, 'note'],
    ['forwarding-slots', { slotnummer: '01', cases: 'x\u0000' }, 'cases'],
    ['tools', { name: 'end_it', tool_type: 'end_call', config: {}, description: '\u0000' }, 'description'],
    ['knowledge-base', { title: 'T', content: 'c\u0000' }, 'content'],
    [
      'calls',
      { call_id: 'c-1', duration: 1, transcript: [{ role: 'agent', text: 'hallo\u0000' }] },
      'transcript[0].text',
    ],
  ])('refuses a NUL in a %s body with 400 naming the field, and stores nothing', async (resource, body, field) => {
    const table = resource.replace('-', '_').replace('knowledge_base', 'kb_documents');
    const before = await countRows(table);
    const res = await ctx.http.post(`${agentPath()}/${resource}`).set('X-API-Key', w.key).send(body).expect(400);
    expectEnvelope(res.body);
    expect(res.body.error.details).toContainEqual({ field, message: expect.stringContaining('NUL') });
    expect(await countRows(table)).toBe(before);
  });

  it('refuses a lone surrogate anywhere in the body, named by its path, also in unknown fields and keys', async () => {
    const send = (raw: string) =>
      ctx.http
        .post(`${agentPath()}/contacts`)
        .set('X-API-Key', w.key)
        .set('Content-Type', 'application/json')
        .send(raw);
    let res = await send('{"customer_name":"Max \\ud800"}').expect(400);
    expect(res.body.error.details).toEqual([{ field: 'customer_name', message: expect.stringContaining('surrogate') }]);
    res = await send('{"extra":{"list":["ok","\\udc00"]}}').expect(400);
    expect(res.body.error.details).toEqual([{ field: 'extra.list[1]', message: expect.any(String) }]);
    res = await send('{"ke\\u0000y":1}').expect(400);
    expect(res.body.error.details).toEqual([{ field: 'ke\u0000y', message: expect.any(String) }]);
  });

  it('refuses a NUL in a query filter with 400 naming the parameter', async () => {
    for (const query of ['search=%00', 'tag=a%00', 'phone_number=%2B49%00']) {
      const res = await ctx.http.get(`${agentPath()}/contacts?${query}`).set('X-API-Key', w.key).expect(400);
      expect(res.body.error.details).toEqual([{ field: query.split('=')[0], message: expect.stringContaining('NUL') }]);
    }
    const calls = await ctx.http.get(`${agentPath()}/calls?phone_number=%00`).set('X-API-Key', w.key).expect(400);
    expect(calls.body.error.details[0].field).toBe('phone_number');
  });

  it('refuses JSON nested deeper than 32 levels with 400, however deep', async () => {
    for (const depth of [40, 100_000]) {
      const raw = `{"config":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const res = await ctx.http
        .post(`${agentPath()}/tools`)
        .set('X-API-Key', w.key)
        .set('Content-Type', 'application/json')
        .send(raw)
        .expect(400);
      expectEnvelope(res.body);
    }
  });

  it('counts lengths in code points, as PostgreSQL does: 50 emoji are a 50-character tag', async () => {
    const emoji = '😀'.repeat(50);
    const ok = await ctx.http
      .post(`${agentPath()}/contacts`)
      .set('X-API-Key', w.key)
      .send({ customer_name: 'Emoji', tags: [emoji] })
      .expect(201);
    expect(ok.body.tags).toEqual([emoji]);
    const tooLong = await ctx.http
      .post(`${agentPath()}/contacts`)
      .set('X-API-Key', w.key)
      .send({ customer_name: 'Emoji', tags: [`${emoji}x`] })
      .expect(400);
    expect(tooLong.body.error.details).toEqual([{ field: 'tags[0]', message: 'Must be at most 50 characters' }]);
  });
});

describe('ids in paths', () => {
  it('treats an upper-case id as the same id: same resource, ids answered in lower case', async () => {
    const res = await ctx.http.get(`/v1/agents/${w.agentId.toUpperCase()}`).set('X-API-Key', w.key).expect(200);
    expect(res.body.id).toBe(w.agentId);
    const slot = await ctx.http
      .post(`/v1/agents/${w.agentId.toUpperCase()}/forwarding-slots`)
      .set('X-API-Key', w.key)
      .send({ slotnummer: '77', cases: 'Upper' })
      .expect(201);
    expect(slot.body.agent_id).toBe(w.agentId);
  });

  it('answers malformed percent-encoding in a path with 400 in the envelope', async () => {
    for (const bad of ['%E0%A4%A', '%', '%zz', '%C0%AF']) {
      const res = await ctx.http.get(`/v1/agents/${bad}`).set('X-API-Key', w.key).expect(400);
      expectEnvelope(res.body);
    }
  });

  it('answers it with 400 before any credential check, also on a route for login tokens only', async () => {
    for (const [path, headers] of [
      ['/v1/me/webhook/%E0%A4%A', { 'X-API-Key': w.key }],
      ['/v1/api-keys/%zz', {}],
      ['/v1/unknown/%', {}],
    ] as const) {
      const res = await ctx.http.post(path).set(headers).expect(400);
      expectEnvelope(res.body);
      expect(res.body.error.message).toContain('malformed percent-encoding');
    }
  });
});

describe('bodies that do not decode', () => {
  const post = () =>
    ctx.http.post(`${agentPath()}/employees`).set('X-API-Key', w.key).set('Content-Type', 'application/json');

  it('is 415 for an unsupported Content-Encoding', async () => {
    const res = await post().set('Content-Encoding', 'x-bogus').send('{"name":"A"}').expect(415);
    expectEnvelope(res.body);
  });

  it('is 400 for a gzip, br or deflate body that is not compressed', async () => {
    for (const encoding of ['gzip', 'br', 'deflate']) {
      const res = await post().set('Content-Encoding', encoding).send('{"name":"A"}').expect(400);
      expectEnvelope(res.body);
    }
  });

  it('accepts a body that really is gzip-compressed', async () => {
    const res = await post()
      .set('Content-Encoding', 'gzip')
      // Sent as the bytes given, not serialised as JSON again.
      .serialize((body: string) => body)
      .send(gzipSync(Buffer.from('{"name":"Gzip Erika"}')))
      .expect(201);
    expect(res.body.name).toBe('Gzip Erika');
  });

  it('is 415 for an unsupported charset', async () => {
    const res = await ctx.http
      .post(`${agentPath()}/employees`)
      .set('X-API-Key', w.key)
      .set('Content-Type', 'application/json; charset=latin1')
      .send('{"name":"A"}')
      .expect(415);
    expectEnvelope(res.body);
  });
});

describe('pagination bounds', () => {
  it('is 400 naming page for a page past any possible offset, and for a huge limit', async () => {
    for (const query of ['page=99999999999999999999', 'page=1000001', 'page=1e20', 'limit=99999999999999999999']) {
      const res = await ctx.http.get(`${agentPath()}/contacts?${query}`).set('X-API-Key', w.key).expect(400);
      expect(res.body.error.details).toEqual([{ field: query.split('=')[0], message: expect.any(String) }]);
    }
  });

  it('still answers the highest allowed page with 200 and no rows', async () => {
    const res = await ctx.http
      .get(`${agentPath()}/contacts?page=1000000&limit=100`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(res.body.data).toEqual([]);
  });
});

describe('10 MB bodies', () => {
  const tenMb = () => `{"customer_name":"${'a'.repeat(10 * 1024 * 1024)}"}`;

  it('is 413 in the envelope for a 10 MB body with a Content-Length, and stores nothing', async () => {
    const before = await countRows('contacts');
    const res = await ctx.http
      .post(`${agentPath()}/contacts`)
      .set('X-API-Key', w.key)
      .set('Content-Type', 'application/json')
      .send(tenMb())
      .expect(413);
    expectEnvelope(res.body);
    expect(await countRows('contacts')).toBe(before);
  });

  it('is 413 in the envelope for a 10 MB chunked body, and the server answers the next request', async () => {
    const port = Number(new URL(ctx.baseUrl).port);
    const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `${agentPath()}/contacts`,
          headers: { 'X-API-Key': w.key, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      const body = Buffer.from(tenMb());
      for (let at = 0; at < body.length; at += 1024 * 1024) req.write(body.subarray(at, at + 1024 * 1024));
      req.end();
    });
    expect(status.status).toBe(413);
    expectEnvelope(JSON.parse(status.body));
    await ctx.http.get(`${agentPath()}/contacts`).set('X-API-Key', w.key).expect(200);
  });
});

describe('invalid UTF-8 in the path', () => {
  it.each(['%C0%AF', '%C0%80', '%E0%80%AF', '%ED%A0%80', '%FF', '%C3%28', '%E2%82', '%F4%90%80%80'])(
    'answers /v1/agents/%s (percent-encoded) with 400 in the envelope',
    async (bad) => {
      const res = await ctx.http.get(`/v1/agents/${bad}`).set('X-API-Key', w.key).expect(400);
      expectEnvelope(res.body);
      const sub = await ctx.http.get(`${agentPath()}/contacts/${bad}`).set('X-API-Key', w.key).expect(400);
      expectEnvelope(sub.body);
    },
  );

  it('refuses a DELETE whose id is invalid UTF-8 and deletes nothing', async () => {
    const before = await ctx.db('agents').where({ organization_id: w.orgId }).count({ n: '*' }).first();
    const res = await ctx.http.delete('/v1/agents/%C0%AF').set('X-API-Key', w.key).expect(400);
    expectEnvelope(res.body);
    expect(await ctx.db('agents').where({ organization_id: w.orgId }).count({ n: '*' }).first()).toEqual(before);
  });

  it.each([
    ['an overlong slash', [0xc0, 0xaf]],
    ['bytes that never occur in UTF-8', [0xff, 0xfe]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['a truncated sequence', [0xe2, 0x82]],
  ])('answers raw bytes (%s) in the path with 400 in the envelope', async (_name, bytes) => {
    const request = Buffer.concat([
      Buffer.from('GET /v1/agents/', 'latin1'),
      Buffer.from(bytes),
      Buffer.from(` HTTP/1.1\r\nHost: x\r\nX-API-Key: ${w.key}\r\n\r\n`, 'latin1'),
    ]);
    const res = await rawRequest(Number(new URL(ctx.baseUrl).port), request);
    expect(res.status).toBe(400);
    expectEnvelope(JSON.parse(res.body));
  });
});

describe('repeated query parameters', () => {
  it.each([
    ['limit=1&limit=2', 'limit'],
    ['page=1&page=2', 'page'],
    ['limit=20&limit=20', 'limit'],
    ['search=a&search=b', 'search'],
  ])('answers ?%s with 400 naming %s', async (query, field) => {
    const res = await ctx.http.get(`${agentPath()}/contacts?${query}`).set('X-API-Key', w.key).expect(400);
    expectEnvelope(res.body);
    expect(res.body.error.details).toContainEqual({ field, message: expect.any(String) });
  });

  it('answers repeated paging parameters on a cursor-paged list and on the agents list with 400', async () => {
    for (const path of [`${agentPath()}/calls?cursor=a&cursor=b`, '/v1/agents?limit=1&limit=2']) {
      const res = await ctx.http.get(path).set('X-API-Key', w.key).expect(400);
      expectEnvelope(res.body);
    }
  });
});

/** One request on its own connection, read until the server closes it. */
function rawRequest(port: number, request: Buffer) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]),
        body: text.slice(text.indexOf('\r\n\r\n') + 4),
      });
    });
  });
}

describe("Node's own parser errors", () => {
  // The file's server (the one main.ts runs) answers them.
  const port = () => Number(new URL(ctx.baseUrl).port);

  const raw = (request: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const socket = net.connect(port(), '127.0.0.1', () => socket.end(request));
      const chunks: Buffer[] = [];
      socket.on('data', (c) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]),
          body: text.slice(text.indexOf('\r\n\r\n') + 4),
        });
      });
    });

  it.each([
    ['an unknown method', 'BREW /v1/agents HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['oversized headers', `GET /v1/agents HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ['a malformed request line', 'GET  HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['a malformed header', 'GET /v1/agents HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n', 400],
    ['a CONNECT request', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 400],
    ['a CONNECT request with bytes after it', 'CONNECT 127.0.0.1:5432 HTTP/1.1\r\nHost: x\r\n\r\n\x16\x03\x01', 400],
  ])('answers %s with the envelope', async (_name, request, status) => {
    const res = await raw(request);
    expect(res.status).toBe(status);
    expectEnvelope(JSON.parse(res.body));
  });
});
