import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
const nginx = readFileSync(path.join(root, 'deploy/nginx.conf'), 'utf8');
// The Compose Specification's JSON schema, as the dclint package ships it.
const schema = JSON.parse(readFileSync(path.join(root, 'node_modules/dclint/schemas/compose.schema.json'), 'utf8'));

// The parsed YAML as the checks read it; the schema test above is what types it.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Service = Record<string, any>;
const services = Object.entries<Service>(compose.services);
const apis = services.filter(([name]) => /^api-\d+$/.test(name));

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    // Its $schema names draft-07 by an https address ajv does not know by that name; the draft is ajv's default.
    const { $schema: _draft, ...definitions } = schema;
    const validate = ajv.compile(definitions);
    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true);
  });

  it('runs PostgreSQL, Redis, a one-shot migration, two or more API replicas and a load balancer', () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['postgres', 'redis', 'migrate', 'lb']));
    expect(apis.length).toBeGreaterThanOrEqual(2);
    expect(compose.services.migrate.restart).toBe('no');
    for (const [, api] of apis) {
      expect(api.depends_on.migrate).toEqual({ condition: 'service_completed_successfully' });
      expect(api.environment.REDIS_URL).toBe('redis://redis:6379');
    }
    for (const [name] of apis) {
      expect(compose.services.lb.depends_on[name]).toEqual({ condition: 'service_healthy' });
      expect(nginx).toContain(`server ${name}:3000`);
    }
  });

  it('requires JWT_SECRET (no default in the file)', () => {
    for (const [, service] of [...apis, ['migrate', compose.services.migrate] as const]) {
      expect(service.environment.JWT_SECRET).toMatch(/^\$\{JWT_SECRET:\?[^}]+\}$/);
    }
    expect(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')).not.toMatch(/JWT_SECRET:-/);
  });

  it('gives every long-running service a health check, init and a stop grace period', () => {
    for (const [name, service] of services) {
      expect(service.init, name).toBe(true);
      expect(service.stop_grace_period, name).toMatch(/^\d+s$/);
      // The one-shot migration's health is its exit status (service_completed_successfully).
      if (name === 'migrate') continue;
      expect(service.healthcheck?.test, name).toBeDefined();
    }
  });
});

describe('the production start', () => {
  // `exec env NAME=value ... node <flags> dist/main.js`: the shell hands its process to env, env to node.
  const words = (
    JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts['start:prod']!.split(/\s+/);
  const startProd = words.slice(words.indexOf('node'));
  const startProdEnv = words.slice(words.indexOf('env') + 1, words.indexOf('node'));
  const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  const cmd = JSON.parse(dockerfile.match(/^CMD (\[.*\])$/m)![1]!) as string[];

  it("is the same command in the image's CMD and in npm run start:prod, V8 and malloc settings included", () => {
    expect(cmd).toEqual(startProd);
    expect(cmd).toEqual(expect.arrayContaining(['--max-old-space-size=160', '--max-semi-space-size=8', '--expose-gc']));
    expect(startProdEnv).toEqual(['MALLOC_MMAP_THRESHOLD_=32768']);
    // The image's ENV block sets the same variables.
    const env = dockerfile.match(/^ENV ((?:.*\\\n)*.*)$/m)![1]!.split(/\s*\\\n\s*|\s+/);
    expect(env).toEqual(expect.arrayContaining(startProdEnv));
  });

  it('uses Node flags that this Node accepts', () => {
    const flags = startProd.slice(1, -1);
    expect(flags.length).toBeGreaterThan(0);
    expect(execFileSync(process.execPath, [...flags, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' })).toBe(
      'ok',
    );
  });
});
