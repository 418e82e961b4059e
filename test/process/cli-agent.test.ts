import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { freePort, killLeftovers, spawnServer } from '../support/server-process.js';

/**
 * `npm run cli -- agent pull|diff|push` as a person runs it: the CLI a process of its own, talking
 * HTTP to this file's running server through VAM_BASE_URL and VAM_API_KEY.
 */

let ctx: TestContext;
let w: World;
let dir: string;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  dir = mkdtempSync(path.join(os.tmpdir(), 'vam-cli-agent-'));
});
afterAll(async () => {
  killLeftovers();
  rmSync(dir, { recursive: true, force: true });
  await ctx.close();
});

async function cli(args: string[], env: { VAM_BASE_URL?: string; VAM_API_KEY?: string } = {}) {
  const run = spawnServer('npm', ['run', '--silent', 'cli', '--', 'agent', ...args], {
    env: { VAM_BASE_URL: ctx.baseUrl, VAM_API_KEY: w.key, ...env },
  });
  const { code } = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** An agent with an employee, a tool holding a credential and a greeting, made through the API. */
async function agent(): Promise<string> {
  const res = await ctx.http
    .post('/v1/agents/import')
    .set('X-API-Key', w.key)
    .send({
      api_version: 'voice-agent/v1',
      kind: 'Agent',
      name: 'Müller Sanitär',
      phone_number: ctx.build.phone(),
      secrets: { 'tools.kunden.headers.Authorization': 'Bearer s3cr3t' },
      spec: {
        configuration: { greeting: 'Guten Tag, Müller Sanitär', prompt: 'Nimm Notfälle auf.' },
        employees: [{ name: 'Meister', phone_number: '+4930123456' }],
        tools: [
          {
            name: 'kunden',
            tool_type: 'http_request',
            description: 'Kunden suchen',
            config: {
              url: 'https://crm.example.com/lookup',
              method: 'GET',
              headers: [{ name: 'Authorization', value: { $secret: 'tools.kunden.headers.Authorization' } }],
            },
          },
        ],
      },
    })
    .expect(201);
  return res.body.id as string;
}

const versions = async (id: string) =>
  Number((await ctx.db('agent_versions').where({ agent_id: id }).count({ n: '*' }))[0]!.n);

describe('npm run cli -- agent pull | diff | push', () => {
  it('pulls YAML, diffs a change without storing it, pushes it, and then diffs nothing', async () => {
    const id = await agent();
    const work = path.join(dir, 'mueller');

    const pulled = await cli(['pull', id, work]);
    expect(pulled.code, pulled.stderr).toBe(0);
    const file = path.join(work, 'agent.yaml');
    const yaml = readFileSync(file, 'utf8');
    const bundle = (await ctx.http.get(`/v1/agents/${id}/bundle`).set('X-API-Key', w.key).expect(200)).body;
    expect(parse(yaml)).toEqual(bundle);
    expect(yaml).toContain('greeting: Guten Tag, Müller Sanitär');
    expect(yaml).not.toContain('s3cr3t');
    expect(JSON.parse(readFileSync(path.join(work, '.agent.json'), 'utf8'))).toMatchObject({ agent_id: id });

    // A person edits the file: a new greeting, an employee more.
    writeFileSync(
      file,
      yaml
        .replace('greeting: Guten Tag, Müller Sanitär', 'greeting: Moin, Müller Sanitär')
        .replace('  employees:\n', '  employees:\n    - name: Geselle\n      phone_number: "+4930654321"\n'),
    );
    const stored = versions(id);
    const diff = await cli(['diff', work]);
    expect(diff.code, diff.stderr).toBe(0);
    const changes = (parse(diff.stdout) as { changes: { path: string; op: string; to?: unknown }[] }).changes;
    expect(changes.map((c) => `${c.op} ${c.path}`)).toEqual([
      'change spec.configuration.greeting',
      'add spec.employees.Geselle',
    ]);
    expect(changes[0]!.to).toBe('Moin, Müller Sanitär');
    expect((await ctx.db('agents').where({ id }).first('greeting')).greeting).toBe('Guten Tag, Müller Sanitär');
    expect(await versions(id)).toBe(await stored);

    const pushed = await cli(['push', work]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect((parse(pushed.stdout) as { changes: unknown[] }).changes).toHaveLength(2);
    expect((await ctx.db('agents').where({ id }).first('greeting')).greeting).toBe('Moin, Müller Sanitär');
    expect(await ctx.db('employees').where({ agent_id: id }).orderBy('name').pluck('name')).toEqual([
      'Geselle',
      'Meister',
    ]);
    expect(await versions(id)).toBe((await stored) + 1);
    // The placeholder kept the stored credential.
    const tool = await ctx.db('tools').where({ agent_id: id, name: 'kunden' }).first('config');
    expect(tool.config.headers[0].value).toBe('Bearer s3cr3t');

    const again = await cli(['diff', work]);
    expect(again.code, again.stderr).toBe(0);
    expect(parse(again.stdout)).toEqual({ changes: [] });
  }, 120_000);

  it('says what is wrong (a bad key, an unreachable API, a field that cannot be stored) and exits non-zero', async () => {
    const id = await agent();
    const work = path.join(dir, 'refused');
    const badKey = await cli(['pull', id, work], { VAM_API_KEY: 'vam_not_a_real_key' });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toBe(
      `GET /v1/agents/${id}/bundle: 401 UNAUTHORIZED Invalid or missing API key (check VAM_API_KEY)\n`,
    );
    expect(existsSync(work)).toBe(false);

    const unreachable = await cli(['pull', id, work], { VAM_BASE_URL: `http://127.0.0.1:${await freePort()}` });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(
      /^Cannot reach the API at http:\/\/127\.0\.0\.1:\d+ \(VAM_BASE_URL\): .*ECONNREFUSED/,
    );

    expect((await cli(['pull', id, work])).code).toBe(0);
    const file = path.join(work, 'agent.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('+4930123456', 'nope'));
    const invalid = await cli(['push', work]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('400 VALIDATION_ERROR');
    expect(invalid.stderr).toMatch(/^ {2}spec\.employees\[0\]\.phone_number: /m);
    expect(await ctx.db('employees').where({ agent_id: id }).pluck('phone_number')).toEqual(['+4930123456']);
  }, 60_000);
});
