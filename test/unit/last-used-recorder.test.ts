import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { KeyUse } from '../../src/auth/credentials.repository.js';
import { LastUsedRecorder } from '../../src/auth/last-used-recorder.js';

const logger = pino({ level: 'silent' });
const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 3, 0, s));

describe('LastUsedRecorder', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('writes the uses of several keys in one batch after the interval, the latest use per key', async () => {
    const batches: KeyUse[][] = [];
    const recorder = new LastUsedRecorder(async (uses) => void batches.push(uses), logger, 5000);
    recorder.record('a', at(1));
    recorder.record('b', at(2));
    recorder.record('a', at(3));
    await vi.advanceTimersByTimeAsync(4999);
    expect(batches).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toEqual([
      [
        { id: 'a', at: at(3) },
        { id: 'b', at: at(2) },
      ],
    ]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(batches).toHaveLength(1); // nothing pending: no timer, no write
  });

  it('logs and drops a failed write; the next use is written again', async () => {
    const write = vi.fn<(uses: KeyUse[]) => Promise<void>>().mockRejectedValueOnce(new Error('database down'));
    const warn = vi.spyOn(logger, 'warn');
    const recorder = new LastUsedRecorder(write, logger, 5000);
    recorder.record('a', at(1));
    await vi.advanceTimersByTimeAsync(5000);
    expect(warn).toHaveBeenCalledOnce();
    recorder.record('b', at(2));
    await recorder.flush();
    expect(write).toHaveBeenCalledTimes(2);
    expect(write.mock.calls[1]![0]).toEqual([{ id: 'b', at: at(2) }]);
  });

  it('writes what is pending on close and records nothing after it', async () => {
    const write = vi.fn(async (_uses: KeyUse[]) => {});
    const recorder = new LastUsedRecorder(write, logger, 5000);
    recorder.record('a', at(1));
    await recorder.close();
    expect(write).toHaveBeenCalledWith([{ id: 'a', at: at(1) }]);
    recorder.record('b', at(2));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(write).toHaveBeenCalledOnce();
  });
});
