import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { pino } from 'pino';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '../../src/errors/index.js';
import { errorHandler } from '../../src/http/error-handler.js';
import { requestId } from '../../src/http/request-id.js';
import { requestLog } from '../../src/http/request-log.js';

/** An app with the product's request id, request log and error handler, logging into `lines`. */
function app(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const logger = pino({ level }, sink);
  const server = express();
  server.use(requestId, requestLog(logger));
  server.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  server.get('/boom', () => {
    throw new Error('kaputt');
  });
  server.get('/away', () => {
    throw new ServiceUnavailableError();
  });
  server.get('/slow', (_req, res) => {
    setTimeout(() => res.json({ late: true }), 300);
  });
  server.use(errorHandler(logger));
  return { server, lines };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('request log', () => {
  it('writes one info line per request with the request, status and duration', async () => {
    const { server, lines } = app();
    await supertest(server).get('/ok?b=2&a=1&b=3').set('X-Request-Id', 'log-ok').expect(200);
    await settled();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { id: 'log-ok', method: 'GET', path: '/ok', query_keys: ['b', 'a'] },
      res: { statusCode: 200 },
      route: null,
    });
    expect(typeof lines[0]!.responseTime).toBe('number');
    expect(Object.keys(lines[0]!)).toEqual([
      'level',
      'time',
      'pid',
      'hostname',
      'req',
      'res',
      'responseTime',
      'route',
      'msg',
    ]);
  });

  it('logs a 500 at error as "request errored", next to the error handler line with the cause', async () => {
    const { server, lines } = app();
    await supertest(server).get('/boom').set('X-Request-Id', 'log-boom').expect(500);
    await settled();
    const failed = lines.find((l) => l.msg === 'request failed');
    expect(failed).toMatchObject({ level: 50, req: { id: 'log-boom', path: '/boom' }, err: { message: 'kaputt' } });
    expect(lines.find((l) => l.msg === 'request errored')).toMatchObject({
      level: 50,
      req: { id: 'log-boom', method: 'GET', path: '/boom' },
      res: { statusCode: 500 },
      err: { type: 'Error', message: 'failed with status code 500' },
    });
  });

  it('logs a 503 (the database away) at warn', async () => {
    const { server, lines } = app();
    await supertest(server).get('/away').expect(503);
    await settled();
    expect(lines.find((l) => l.msg === 'request errored')).toMatchObject({ level: 40, res: { statusCode: 503 } });
  });

  it('writes nothing when the level is off', async () => {
    const { server, lines } = app('silent');
    await supertest(server).get('/ok').expect(200);
    await supertest(server).get('/boom').expect(500);
    await settled();
    expect(lines).toEqual([]);
  });

  it('says "request aborted" when the client leaves before the answer', async () => {
    const { server, lines } = app();
    const listening = server.listen(0, '127.0.0.1');
    await new Promise((resolve) => listening.once('listening', resolve));
    try {
      const { port } = listening.address() as AddressInfo;
      const req = httpRequest({ host: '127.0.0.1', port, path: '/slow', headers: { 'X-Request-Id': 'log-gone' } });
      req.on('error', () => {});
      req.end();
      await new Promise((resolve) => setTimeout(resolve, 50));
      req.destroy();
      await expect
        .poll(() => lines.find((l) => (l.req as { id?: string })?.id === 'log-gone'))
        .toMatchObject({
          level: 30,
          msg: 'request aborted',
        });
    } finally {
      await new Promise((resolve) => listening.close(resolve));
    }
  });
});
