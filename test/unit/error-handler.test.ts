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
