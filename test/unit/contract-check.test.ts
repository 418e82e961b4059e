import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import {
  checkedFetch,
  checkedHttp,
  contractChecker,
  ContractViolation,
  type ContractAnswer,
} from '../support/contract.js';

/** A small document in the shape the app serves: a component schema, a shared response, a 204. */
const document = {
  openapi: '3.1.0',
  info: { title: 'contract check', version: '1' },
  paths: {
    '/v1/things/{thingId}': {
      get: {
        responses: {
          '200': {
            description: 'A thing',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
          '404': { $ref: '#/components/responses/Problem' },
        },
      },
      delete: { responses: { '204': { description: 'No content' } } },
    },
    '/v1/things/search': {
      get: {
        responses: {
          '200': { description: 'Found', content: { 'application/json': { schema: { type: 'array' } } } },
        },
      },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: 'object',
        properties: {
          id: { type: 'string', format: 'uuid' },
          count: { type: 'integer' },
          owner: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          note: { anyOf: [{ $ref: '#/components/schemas/Note' }, { type: 'null' }] },
        },
        required: ['id', 'count', 'owner', 'note'],
      },
      Note: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      Error: {
        type: 'object',
        properties: { error: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] } },
        required: ['error'],
      },
    },
    responses: {
      Problem: {
        description: 'An error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    },
  },
};

const check = contractChecker(document);
const thing = { id: '0b6f3e1c-2a4d-4c8e-9f10-1234567890ab', count: 3, owner: { name: 'Ada' }, note: null };
const answer = (over: Partial<ContractAnswer>): ContractAnswer => ({
  method: 'GET',
  url: `/v1/things/${thing.id}`,
  status: 200,
  contentType: 'application/json; charset=utf-8',
  body: thing,
  ...over,
});

describe('the contract check', () => {
  it('passes an answer that matches its operation, a null where the document allows one included', () => {
    expect(() => check(answer({}))).not.toThrow();
    expect(() => check(answer({ body: { ...thing, note: { text: 'hi' } } }))).not.toThrow();
    expect(() => check(answer({ status: 404, body: { error: { code: 'NOT_FOUND' } } }))).not.toThrow();
    expect(() => check(answer({ method: 'DELETE', status: 204, body: {}, text: '' }))).not.toThrow();
  });

  it('refuses a status the operation does not declare', () => {
    expect(() => check(answer({ status: 409, body: { error: { code: 'CONFLICT' } } }))).toThrow(
      /GET \/v1\/things\/\{thingId\} 409: status not declared/,
    );
  });

  it('refuses a value of the wrong type, naming where it is', () => {
    expect(() => check(answer({ body: { ...thing, count: 'three' } }))).toThrow(/\/count must be integer/);
    expect(() => check(answer({ body: { ...thing, count: 1.5 } }))).toThrow(ContractViolation);
    expect(() => check(answer({ body: { ...thing, id: 'not-a-uuid' } }))).toThrow(/\/id must match format "uuid"/);
  });

  it('refuses null where the document requires an object', () => {
    expect(() => check(answer({ body: { ...thing, owner: null } }))).toThrow(/\/owner must be object/);
  });

  it('refuses a missing required field, a body on a bodiless status and a non-JSON answer', () => {
    const { count: _count, ...withoutCount } = thing;
    expect(() => check(answer({ body: withoutCount }))).toThrow(/must have required property 'count'/);
    expect(() => check(answer({ method: 'DELETE', status: 204, body: {}, text: '{}' }))).toThrow(/no body/);
    expect(() => check(answer({ contentType: 'text/html', body: {}, text: '<p>' }))).toThrow(/Content-Type/);
  });

  it('checks shared responses by their reference, and literal path segments before parameters', () => {
    expect(() => check(answer({ status: 404, body: { error: {} } }))).toThrow(/required property 'code'/);
    expect(() => check(answer({ url: '/v1/things/search?q=a', body: [] }))).not.toThrow();
    expect(() => check(answer({ url: '/v1/things/search', body: thing }))).toThrow(/must be array/);
  });

  it('holds unknown paths under /v1 to the 404 envelope and other methods to 405', () => {
    expect(() =>
      check(answer({ url: '/v1/nothing', status: 404, body: { error: { code: 'NOT_FOUND' } } })),
    ).not.toThrow();
    expect(() => check(answer({ url: '/v1/nothing', status: 200 }))).toThrow(/no operation/);
    expect(() => check(answer({ method: 'PUT', status: 200 }))).toThrow(/no such operation, and not 405/);
    expect(() => check(answer({ url: '/docs', status: 200, contentType: 'text/html' }))).not.toThrow();
  });

  it('fails a supertest request whose answer breaks the contract, after the test own expectations', async () => {
    const app = express();
    app.get('/v1/things/search', (_req, res) => {
      res.json({ not: 'an array' });
    });
    app.get('/v1/things/:id', (_req, res) => {
      res.status(418).json({ error: { code: 'TEAPOT' } });
    });
    const http = checkedHttp(app, check);
    await expect(http.get('/v1/things/search').expect(200)).rejects.toThrow(/must be array/);
    await expect(http.get(`/v1/things/${thing.id}`)).rejects.toThrow(/418: status not declared/);
    // The test's own expectation is reported first.
    await expect(http.get(`/v1/things/${thing.id}`).expect(200)).rejects.toThrow(/expected 200 "OK", got 418/);
  });

  it('fails a fetch whose answer breaks the contract', async () => {
    const app = express();
    app.get('/v1/things/:id', (_req, res) => {
      res.json({ ...thing, owner: null });
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const fetch = checkedFetch(check);
      await expect(fetch(`http://127.0.0.1:${port}/v1/things/${thing.id}`)).rejects.toThrow(/\/owner must be object/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
