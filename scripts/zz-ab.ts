// Ad-hoc A/B of product configurations (not committed): CPU µs per request and req/s, alternating rounds.
import { createDb } from '../src/db/knex.js';
import { cpuMs, load, productEntry, startServer, summarize, tenant, useRuntime } from './bench/support.js';
import { execFileSync } from 'node:child_process';
const node = process.env.AB_NODE;
if (node) useRuntime({ node, version: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim() });
const variants = JSON.parse(process.env.AB_VARIANTS!) as { name: string; env?: Record<string, string>; args?: string[] }[];
const rounds = Number(process.env.AB_ROUNDS ?? 4);
const seconds = Number(process.env.AB_SECONDS ?? 5);
const url = process.env.DATABASE_URL!;
const db = createDb(url, 2);
const t = await tenant(db, 'AB');
const path = process.env.AB_PATH ?? `/v1/agents/${t.agentId}`;
const base = { DATABASE_URL: url, LOG_LEVEL: 'info', WORKERS_ENABLED: 'false', JWT_SECRET: 'bench-secret-bench-secret-bench-secret!' };
const servers = [];
for (const v of variants) servers.push(await startServer(v.args ?? productEntry().args, { ...base, ...v.env }));
const headers = { 'X-API-Key': t.key };
const runs = variants.map(() => [] as Awaited<ReturnType<typeof load>>[]);
const cpu = variants.map(() => 0);
for (const s of servers) await load(s.url + path, { headers, connections: 50, duration: 2 });
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [...servers.keys()].reverse() : [...servers.keys()];
  for (const i of order) {
    const before = cpuMs(servers[i]!.pid)!;
    runs[i]!.push(await load(servers[i]!.url + path, { headers, connections: 50, duration: seconds }));
    cpu[i]! += cpuMs(servers[i]!.pid)! - before;
  }
}
variants.forEach((v, i) => {
  const s = summarize(runs[i]!);
  const bad = runs[i]!.reduce((n, x) => n + x.non2xx + x.errors, 0);
  console.log(`${v.name.padEnd(30)} ${String(s.rps).padStart(7)} req/s  p99 ${s.p99} ms  CPU ${((1000 * cpu[i]!) / s.requests).toFixed(1)} µs/req${bad ? ` BAD ${bad}` : ''}`);
});
for (const s of servers) await s.stop();
await db.destroy();
