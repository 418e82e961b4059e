import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

/**
 * The real server as a child process (`node --import tsx src/main.ts`), against this file's
 * database, stopped with SIGTERM while clients keep it busy. Through npm: test/process/signals.test.ts.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHUTDOWN_TIMEOUT_MS = 3000;
/** Process start-up and exit around the deadline (the deadline itself is the server's to keep). */
const EXIT_SLACK_MS = 1500;

let ctx: TestContext;
let w: World;
const children: ChildProcess[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await ctx.close();
});

type Started = {
  child: ChildProcess;
  port: number;
  nodePid: number;
  output: () => string;
  exited: Promise<number | null>;
};

/** Starts the server and resolves once its "listening on" line appeared. */
async function startServer(command: string, args: string[]): Promise<Started> {
  const child = spawn(command, args, {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: ctx.config.DATABASE_URL,
      JWT_SECRET: ctx.config.JWT_SECRET,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      WORKERS_ENABLED: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await expect
    .poll(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(output), { timeout: 30_000, interval: 50 })
    .toBe(true);
  const line = output.split('\n').find((l) => l.includes('listening on'))!;
  const parsed = JSON.parse(line) as { port: number; pid: number };
  return { child, port: parsed.port, nodePid: parsed.pid, output: () => output, exited };
}

/** Clients that send keep-alive requests back to back until told to stop. */
function hammer(port: number, clients: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const statuses: number[] = [];
  let running = true;
  const once = () =>
    new Promise<void>((resolve) => {
      const req = http.get(
        { host: '127.0.0.1', port, path: `/v1/agents/${w.agentId}`, agent, headers: { 'X-API-Key': w.key } },
        (res) => {
          statuses.push(res.statusCode ?? 0);
          res.resume();
          res.on('end', resolve);
          res.on('error', () => resolve());
        },
      );
      req.on('error', () => resolve());
    });
  const loops = Array.from({ length: clients }, async () => {
    while (running) await once();
  });
  return {
    statuses,
    async stop() {
      running = false;
      await Promise.all(loops);
      agent.destroy();
    },
  };
}

describe('SIGTERM', () => {
  it('finishes an in-flight request with Connection: close while clients hammer, and exits 0 within the deadline', async () => {
    const server = await startServer(process.execPath, ['--import', 'tsx', 'src/main.ts']);
    // A request in flight when the signal comes: its body is still on the way.
    const body = JSON.stringify({ phone_number: '+493012345678', customer_name: 'Late Arrival' });
    const inFlight = net.connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve) => inFlight.once('connect', () => resolve()));
    let answer = '';
    inFlight.on('data', (chunk) => (answer += String(chunk)));
    const socketClosed = new Promise<void>((resolve) => inFlight.once('close', () => resolve()));
    inFlight.write(
      `POST /v1/agents/${w.agentId}/contacts HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n` +
        `X-API-Key: ${w.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
        body.slice(0, 10),
    );
    const load = hammer(server.port, 8);
    await expect.poll(() => load.statuses.length, { timeout: 10_000, interval: 10 }).toBeGreaterThan(50);

    const signalled = performance.now();
    server.child.kill('SIGTERM');
    await expect.poll(() => server.output().includes('shutting down'), { timeout: 5000, interval: 5 }).toBe(true);
    inFlight.write(body.slice(10));
    await socketClosed;
    const code = await server.exited;
    const tookMs = performance.now() - signalled;
    await load.stop();

    console.info(`shutdown under load: exited ${Math.round(tookMs)} ms after SIGTERM`);
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(code).toBe(0);
    expect(tookMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS + EXIT_SLACK_MS);
    expect(load.statuses.filter((s) => s !== 200)).toEqual([]);
    expect(server.output()).toContain('"msg":"stopped"');
    expect(server.output()).not.toContain('connections still open at the deadline');
  }, 60_000);

  it('cuts a request that never completes at the deadline and still exits 0', async () => {
    const server = await startServer(process.execPath, ['--import', 'tsx', 'src/main.ts']);
    // A request whose body never arrives: the server cannot finish it on its own.
    const stuck = net.connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve) => stuck.once('connect', () => resolve()));
    stuck.on('error', () => {});
    stuck.write(
      `POST /v1/agents/${w.agentId}/contacts HTTP/1.1\r\nHost: x\r\nX-API-Key: ${w.key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"customer_name":',
    );
    const load = hammer(server.port, 4);
    await expect.poll(() => load.statuses.length, { timeout: 10_000, interval: 10 }).toBeGreaterThan(20);

    const signalled = performance.now();
    server.child.kill('SIGTERM');
    const code = await server.exited;
    const tookMs = performance.now() - signalled;
    await load.stop();
    stuck.destroy();
    console.info(`shutdown with a stuck request: exited ${Math.round(tookMs)} ms after SIGTERM`);

    expect(code).toBe(0);
    expect(tookMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS + EXIT_SLACK_MS);
    expect(server.output()).toContain('connections still open at the deadline were closed');
  }, 60_000);
});
