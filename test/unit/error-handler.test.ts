import express from 'express';
import { pino } from 'pino';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/errors/index.js';
import { errorHandler } from '../../src/http/error-handler.js';
import { requestId } from '../../src/http/request-id.js';

function appThrowing(error: unknown) {
  const app = express();
  app.use(requestId);
  app.get('/boom', () => {
    throw error;
  });
  app.use(errorHandler(pino({ level: 'silent' })));
  return supertest(app);
}

describe('errorHandler', () => {
  it('turns an unexpected exception into a generic 500 without its message', async () => {
    const res = await appThrowing(new Error('password=hunter2 at db.query')).get('/boom').expect(500);
    expect(res.body).toEqual({
      error: {
        code: 'INTERNAL_ERROR',
        message: 'An unexpected error occurred',
        request_id: res.headers['x-request-id'],
      },
    });
  });

  it('renders an AppError with its status, code and details', async () => {
    const res = await appThrowing(new ConflictError('Name taken', [{ field: 'name', message: 'exists' }]))
      .get('/boom')
      .expect(409);
    expect(res.body.error).toMatchObject({
      code: 'CONFLICT',
      message: 'Name taken',
      details: [{ field: 'name', message: 'exists' }],
    });
  });
});

describe('errors of the request itself', () => {
  const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code, severity: 'ERROR' });

  it.each([
    ['a deadlock that survived the retry', pgError('40P01'), 409, 'CONFLICT'],
    ['a serialization failure', pgError('40001'), 409, 'CONFLICT'],
    ['an unhandled unique violation', pgError('23505'), 409, 'CONFLICT'],
    ['an unhandled foreign-key violation', pgError('23503'), 409, 'CONFLICT'],
    ['a value PostgreSQL cannot store (class 22)', pgError('22P05'), 400, 'VALIDATION_ERROR'],
    ['a numeric value out of range', pgError('22003'), 400, 'VALIDATION_ERROR'],
    [
      "the router's URIError for bad percent-encoding",
      Object.assign(new URIError('URI malformed'), { status: 400 }),
      400,
      'VALIDATION_ERROR',
    ],
    [
      "body-parser's 400 for a body that does not decode",
      Object.assign(new Error('incorrect header check'), { status: 400, expose: true }),
      400,
      'VALIDATION_ERROR',
    ],
  ])('renders %s with the envelope, never 500', async (_name, error, status, code) => {
    const res = await appThrowing(error).get('/boom').expect(status);
    expect(res.body.error).toMatchObject({ code, message: expect.any(String), request_id: expect.any(String) });
    expect(res.body.error.message).not.toContain('pg ');
  });
});
