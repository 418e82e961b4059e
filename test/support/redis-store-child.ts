/**
 * A process that opens the rate-limit store as main.ts does (`node --import tsx` this file, with the
 * Redis URL as its argument) and counts a request every 20 ms, printing one JSON line per request.
 * test/api/redis-outage.api.test.ts stops Redis under it and checks that it lives on.
 */
import { pino } from 'pino';
import { openRateLimitStore } from '../../src/http/redis-rate-limit-store.js';

const store = await openRateLimitStore({ REDIS_URL: process.argv[2] }, pino({ level: 'info' }));
const limits = { perMinute: 1_000_000, perHour: 1_000_000 };
setInterval(() => {
  void store.consume('child', limits, new Date()).then((decision) => {
    process.stdout.write(`${JSON.stringify({ tick: true, allowed: decision.allowed, ...store.health?.() })}\n`);
  });
}, 20);
