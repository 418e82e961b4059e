/**
 * variants: one build of the product started several ways side by side (Node flags, environment),
 * on the chain's request (authenticated GET /v1/agents/{agentId}), in alternating rounds with the
 * order reversed every other round, with each server's CPU time per request from /proc. For settings
 * rather than code: `compare` measures checkouts. Name a variant twice to see the noise of a run.
 * BENCH_VARIANTS: a JSON array of `{ "name", "env"?, "args"? }`; `args` replaces Node's arguments of
 * `npm run start:prod` (the script and its flags), `env` is added to the server's environment. E.g.
 * `[{"name":"as shipped"},{"name":"silent","env":{"LOG_LEVEL":"silent"}},
 *   {"name":"semi 16","args":["--max-semi-space-size=16","dist/main.js"]}]`.
 */
import type { Knex } from 'knex';
import { z } from 'zod';
import {
  alternatingRounds,
  pad,
  productEntry,
  ROUNDS,
  SECONDS,
  startServer,
  summarize,
  tenant,
  type Server,
} from './support.js';

const Variants = z
  .array(
    z.object({
      name: z.string().min(1),
      env: z.record(z.string(), z.string()).optional(),
      args: z.array(z.string()).min(1).optional(),
    }),
  )
  .min(1);

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

export async function variants(db: Knex, databaseUrl: string) {
  const given = Variants.parse(JSON.parse(process.env.BENCH_VARIANTS ?? 'null'));
  const t = await tenant(db, 'Bench variants');
  const env = {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    WORKERS_ENABLED: 'false',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
  };
  const entry = productEntry();
  const servers: Server[] = [];
  try {
    for (const v of given) servers.push(await startServer(v.args ?? entry.args, { ...entry.env, ...env, ...v.env }));
    const { runs, cpuMs: cpu } = await alternatingRounds(
      servers.map((s) => ({ url: `${s.url}/v1/agents/${t.agentId}`, pid: s.pid, headers: { 'X-API-Key': t.key } })),
      { rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS },
    );
    const rows = given.map((v, i) => {
      const s = summarize(runs[i]!);
      return { name: v.name, ...s, cpu_us_per_request: Math.round((10_000 * cpu[i]!) / s.requests) / 10 };
    });
    process.stdout.write(
      [
        `variants: ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s; product ${entry.runtime}`,
        `${'variant'.padEnd(30)} ${pad('req/s', 8)} ${pad('p99 ms', 7)} ${pad('CPU µs', 8)}`,
        ...rows.map((r) => `${r.name.padEnd(30)} ${pad(r.rps, 8)} ${pad(r.p99, 7)} ${pad(r.cpu_us_per_request, 8)}`),
        '',
      ].join('\n'),
    );
    return { connections: CONNECTIONS, rounds: ROUNDS, seconds: SECONDS, variants: given, results: rows };
  } finally {
    for (const s of servers) await s.stop();
  }
}
