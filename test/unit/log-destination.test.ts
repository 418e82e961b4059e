import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LogDestination } from '../../src/log-destination.js';

const line = (i: number) => `${JSON.stringify({ level: 30, i, msg: 'größe ü €' })}\n`;

/** A reader that starts reading after `delayMs`: until then its pipe fills up and refuses writes (EAGAIN). */
function slowReader(delayMs: number) {
  const child = spawn('sh', ['-c', `sleep ${delayMs / 1000}; cat`], { stdio: ['pipe', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  // The pipe's own descriptor (non-blocking, as libuv opened it), written to directly.
  const fd = (Reflect.get(child.stdin, '_handle') as { fd: number }).fd;
  return {
    fd,
    received: () => Buffer.concat(chunks).toString('utf8'),
    stop: () => {
      child.stdin.destroy();
      child.kill();
    },
  };
}

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

describe('LogDestination', () => {
  it('writes the lines of a burst to a file, in order, without being flushed', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vam-logdest-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'out.log');
    const destination = new LogDestination(file);
    const expected = Array.from({ length: 2000 }, (_, i) => line(i)).join('');
    for (let i = 0; i < 2000; i++) destination.write(line(i));
    await expect.poll(() => readFileSync(file, 'utf8'), { timeout: 2000, interval: 5 }).toBe(expected);
  });

  it('keeps what a full pipe refuses and writes it once the reader drains it, whole characters and in order, never blocking the writer', async () => {
    const reader = slowReader(300);
    cleanup.push(reader.stop);
    const destination = new LogDestination(reader.fd);
    // About 400 KB: several times what a pipe holds.
    const lines = Array.from({ length: 8000 }, (_, i) => line(i));
    const started = performance.now();
    for (const l of lines) destination.write(l);
    destination.flush();
    // The reader sleeps for 300 ms: a blocking write would have waited for it.
    expect(performance.now() - started).toBeLessThan(250);
    const expected = lines.join('');
    await expect.poll(() => reader.received().length, { timeout: 5000, interval: 10 }).toBe(expected.length);
    expect(reader.received()).toBe(expected);
  });

  it('drops lines beyond its limit while the pipe is full, and says how many once it drains', async () => {
    const reader = slowReader(300);
    cleanup.push(reader.stop);
    const destination = new LogDestination(reader.fd, 100_000);
    for (let i = 0; i < 8000; i++) destination.write(line(i));
    await expect.poll(() => reader.received().includes('lines dropped'), { timeout: 5000, interval: 10 }).toBe(true);
    const received = reader.received().trimEnd().split('\n');
    const note = received.map((l) => JSON.parse(l) as { i?: number; msg: string }).find((l) => l.i === undefined)!;
    const dropped = Number(/: (\d+) lines dropped/.exec(note.msg)![1]);
    // Every line is either written once or counted as dropped.
    expect(received.length - 1 + dropped).toBe(8000);
    expect(dropped).toBeGreaterThan(0);
  });

  it('writes what is pending when the process exits', () => {
    const code = [
      "import { LogDestination } from './src/log-destination.ts';",
      'const d = new LogDestination(1);',
      "d.write('first\\n'); d.write('second\\n');",
      'process.exit(0);',
    ].join('\n');
    const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      encoding: 'utf8',
    });
    expect(out.stdout).toBe('first\nsecond\n');
  });
});
