import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { series } from '../../src/http/series.js';

/** An app whose only middleware is `handlers` as one series, then a route and an error renderer. */
function appWith(handlers: RequestHandler[]) {
  const app = express();
  app.use(series(handlers));
  app.get('/', (req, res) => {
    res.json({ seen: seen.get(req) ?? [] });
  });
  const render: ErrorRequestHandler = (error: Error, _req, res, _next) => {
    res.status(500).json({ error: error.message });
  };
  app.use(render);
  return supertest(app);
}

/** The middleware each request passed, by name. */
const seen = new WeakMap<object, string[]>();

const mark =
  (name: string): RequestHandler =>
  (req, _res, next) => {
    seen.set(req, [...(seen.get(req) ?? []), name]);
    next();
  };

describe('series: middleware run as one', () => {
  it('runs each in order, synchronous and asynchronous, then the routes after it', async () => {
    const later: RequestHandler = async (req, res, next) => {
      await new Promise((resolve) => setImmediate(resolve));
      mark('async')(req, res, next);
    };
    const res = await appWith([mark('a'), later, mark('b')]).get('/');
    expect(res.body).toEqual({ seen: ['a', 'async', 'b'] });
  });

  it('hands an error on, however it is raised, and skips the rest', async () => {
    const thrown: RequestHandler = () => {
      throw new Error('thrown');
    };
    const passed: RequestHandler = (_req, _res, next) => next(new Error('passed'));
    const rejected: RequestHandler = async () => {
      throw new Error('rejected');
    };
    const emptyRejection: RequestHandler = () => Promise.reject(undefined);
    for (const [handler, message] of [
      [thrown, 'thrown'],
      [passed, 'passed'],
      [rejected, 'rejected'],
      [emptyRejection, 'Rejected promise'],
    ] as const) {
      const res = await appWith([mark('a'), handler, mark('never')]).get('/');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: message });
    }
  });

  it('lets a middleware answer itself, without the rest', async () => {
    const answer: RequestHandler = (_req, res) => {
      res.status(204).end();
    };
    const res = await appWith([answer, mark('never')]).get('/');
    expect(res.status).toBe(204);
  });
});
