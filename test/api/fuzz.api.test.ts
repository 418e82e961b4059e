import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzRequests, KINDS, operationsOf } from '../../scripts/fuzz/requests.js';
import { MAX_BODY, runFuzz } from '../../scripts/fuzz/runner.js';
import { seedWorld } from '../../scripts/fuzz/world.js';
import { createTestContext, type TestContext } from '../support/context.js';

/** The fixed-seed slice of `npm run fuzz`: the same generator and checks, about 1,000 requests. */
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('hostile input (fixed-seed fuzz run)', () => {
  it('answers 1,000 generated bad requests over every operation without a 5xx, each error in the envelope', async () => {
    const world = await seedWorld(ctx.db, ctx.config, ctx.baseUrl);
    const document = (await ctx.http.get('/v1/openapi.json').expect(200)).body;
    const operations = operationsOf(document);
    const count = Math.max(1_000, operations.length * 16);
    const report = await runFuzz(ctx.baseUrl, fuzzRequests(operations, world, { seed: 42, count }), {
      concurrency: 4,
      // Each answer the app gives is held to the document too (test/support/contract.ts); the raw
      // requests are refused by Node's HTTP parser before any route (src/http/http-server.ts).
      check: (request, response) => {
        if (request.raw) return undefined;
        try {
          const json = /json/i.test(response.contentType ?? '');
          ctx.contract({
            method: request.method,
            url: request.path,
            status: response.status,
            contentType: response.contentType,
            // A longer answer was cut at MAX_BODY: its status is checked, not its body.
            ...(response.body.length >= MAX_BODY
              ? { body: undefined, statusOnly: true }
              : { body: json && response.body ? JSON.parse(response.body) : undefined, text: response.body }),
          });
          return undefined;
        } catch (violation) {
          return String(violation);
        }
      },
    });

    expect(report.failures).toEqual([]);
    expect(report.total).toBe(count);
    expect(Object.keys(report.byKind).sort()).toEqual([...KINDS].sort());
    // Every kind of refusal is exercised, not only the happy statuses.
    for (const status of ['400', '401', '404', '415', '431']) expect(report.byStatus[status]).toBeGreaterThan(0);
    expect(Object.keys(report.byStatus).every((status) => Number(status) < 500)).toBe(true);
    // 10 MB bodies, invalid UTF-8 in the path (percent-encoded and raw bytes), repeated query parameters.
    for (const answer of ['huge-body 413', 'bad-utf8-path 400', 'duplicate-query 400'])
      expect(report.byKindAndStatus[answer], answer).toBeGreaterThan(0);
    // A repeated or undeclared query parameter is never taken silently (src/http/strict-query.ts).
    expect(report.byKindAndStatus['duplicate-query 200']).toBeUndefined();
  }, 120_000);
});
