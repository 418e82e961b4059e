import { createDb } from '../../src/db/knex.js';
import { OpsRepository } from '../../src/ops/ops.repository.js';
import { load, productEntry, startServer, summarize } from './support.js';
const url = 'postgres://postgres@127.0.0.1:5432/bench_simulate_helper';
const db = createDb(url, 2);
const agent = await db('agents').where({ name: 'Bench simulate agent' }).orderBy('created_at', 'desc').first('id', 'organization_id');
const member = await db('memberships').where({ organization_id: agent.organization_id }).first('user_id');
const created = await new OpsRepository(db).createApiKey({ organizationId: agent.organization_id, userId: member.user_id, rateLimitPerMinute: 2_000_000_000, rateLimitPerHour: 2_000_000_000 });
await db.destroy();
const key = created.key;
const env = { DATABASE_URL: url, LOG_LEVEL: 'warn', WORKERS_ENABLED: 'false', JWT_SECRET: 'bench-secret-bench-secret-bench-secret!' };
const product = await startServer(productEntry().args, env);
const headers = { 'X-API-Key': key, 'Content-Type': 'application/json' };
const base = `${product.url}/v1/agents/${agent.id}`;
const targets: [string, string, 'GET' | 'POST', string | undefined][] = [
  ['get agent', base, 'GET', undefined],
  ['status', `${base}/status`, 'GET', undefined],
  ['preview', `${base}/greeting/preview`, 'POST', JSON.stringify({ at: '2026-12-24T19:30:00+01:00', caller_phone: '+4917612345678' })],
  ['preview nocaller', `${base}/greeting/preview`, 'POST', JSON.stringify({ at: '2026-12-24T19:30:00+01:00' })],
  ['simulate', `${base}/simulate`, 'POST', JSON.stringify({ at: '2026-12-24T19:30:00+01:00', caller_number: '+4917612345678' })],
  ['simulate nocaller', `${base}/simulate`, 'POST', JSON.stringify({ at: '2026-12-24T19:30:00+01:00' })],
];
for (const [name, u, method, body] of targets) {
  await load(u, { headers, method, body, connections: 10, duration: 1 });
  const r = summarize([await load(u, { headers, method, body, connections: 10, duration: 3 })]);
  console.log(name.padEnd(20), r.rps, r.p50, r.p99);
}
await product.stop();
