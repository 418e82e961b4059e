import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDotEnv } from '../../src/env-file.js';
import { bootstrap, credentials, type BootstrapResult } from '../../src/ops/bootstrap.js';
import { createTestContext, type TestContext } from '../support/context.js';

// What a newcomer gets from the first start and from `npm run cli -- credentials`.
let ctx: TestContext;
let demo: BootstrapResult;
beforeAll(async () => {
  ctx = await createTestContext();
  demo = await bootstrap(ctx.db, ctx.config);
});
afterAll(() => ctx.close());

describe('the demo organization of the first start', () => {
  it('has a key allowing 600 requests a minute and 10,000 an hour', async () => {
    const res = await ctx.http.get('/v1/agents').set('X-API-Key', demo.api_key).expect(200);
    expect(res.headers['x-ratelimit-limit']).toBe('600');
    const [row] = await ctx.db('api_keys').where({ organization_id: demo.organization.id });
    expect(row).toMatchObject({ rate_limit_per_minute: 600, rate_limit_per_hour: 10_000 });
  });

  it('has a demo agent with the defaults of an agent created through the API', async () => {
    const created = await ctx.http
      .post('/v1/agents')
      .set('X-API-Key', demo.api_key)
      .send({ name: 'Neu', phone_number: ctx.build.phone() })
      .expect(201);
    const demoAgent = await ctx.http.get(`/v1/agents/${demo.agent.id}`).set('X-API-Key', demo.api_key).expect(200);
    const differ = ['id', 'name', 'phone_number', 'prompt', 'greeting', 'created_at', 'updated_at'];
    const defaults = (agent: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(agent).filter(([k]) => !differ.includes(k)));
    expect(defaults(demoAgent.body)).toEqual(defaults(created.body));
    expect(demoAgent.body.formality).toBe('formal');
  });
});

describe('credentials', () => {
  it('mints a working dashboard token for the demo organization, and a new key only on request', async () => {
    const plain = await credentials(ctx.db, ctx.config, { organizationId: demo.organization.id });
    expect(plain).toMatchObject({ organization: demo.organization, user: { id: demo.user.id } });
    expect(plain.agent).not.toBeNull();
    expect(plain.api_key).toBeUndefined();
    await ctx.http.get('/v1/api-keys').set('Authorization', `Bearer ${plain.dashboard_token}`).expect(200);

    const withKey = await credentials(ctx.db, ctx.config, { organizationId: demo.organization.id, newKey: true });
    const res = await ctx.http.get(`/v1/agents/${demo.agent.id}`).set('X-API-Key', withKey.api_key!).expect(200);
    expect(res.headers['x-ratelimit-limit']).toBe('600');
  });

  it('refuses an organization that does not exist', async () => {
    await expect(
      credentials(ctx.db, ctx.config, { organizationId: '00000000-0000-4000-8000-000000000000' }),
    ).rejects.toThrow(/No organization/);
  });
});

describe('.env', () => {
  it('is read when present, and the real environment wins over it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vam-env-'));
    const file = path.join(dir, '.env');
    writeFileSync(file, 'VAM_TEST_FROM_FILE=file  # comment\nVAM_TEST_BOTH=file\n');
    process.env.VAM_TEST_BOTH = 'real';
    try {
      expect(loadDotEnv(file)).toBe(file);
      expect(process.env.VAM_TEST_FROM_FILE).toBe('file');
      expect(process.env.VAM_TEST_BOTH).toBe('real');
      expect(loadDotEnv(path.join(dir, 'missing.env'))).toBeNull();
    } finally {
      delete process.env.VAM_TEST_FROM_FILE;
      delete process.env.VAM_TEST_BOTH;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
