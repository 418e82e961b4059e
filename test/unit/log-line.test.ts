import { Writable } from 'node:stream';
import { pino, type LoggerOptions } from 'pino';
import { describe, expect, it } from 'vitest';
import { writeLine } from '../../src/http/log-line.js';
import { REDACT_PATHS } from '../../src/logger.js';

function logger(options: LoggerOptions = {}) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  // A fixed time, so that two writes of the same fields are the same bytes.
  const log = pino({ level: 'info', timestamp: () => ',"time":1700000000000', ...options }, sink);
  return { log, lines };
}

const fields = {
  req: { id: 'trace-1', method: 'GET', path: '/v1/agents/a1', query_keys: ['page'] },
  res: { statusCode: 200 },
  responseTime: 3,
  route: '/v1/agents/{agentId}',
  auth_kind: 'api_key',
  user_id: 'u1',
  key_prefix: 'svc_live_0123',
  organization_ids: ['o1', 'o2'],
  text: 'quote " backslash \\ newline \n ümlaut',
};

describe('writeLine', () => {
  it.each(['info', 'warn', 'error'] as const)(
    'writes at %s the bytes pino writes for the same fields',
    async (level) => {
      const { log, lines } = logger({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } });
      const child = log.child({ component: 'http' });
      for (const l of [log, child]) {
        l[level](fields, 'request completed');
        writeLine(l, level, fields, 'request completed');
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(lines).toHaveLength(4);
      expect(lines[1]).toBe(lines[0]);
      expect(lines[3]).toBe(lines[2]);
      expect(JSON.parse(lines[2]!)).toMatchObject({ component: 'http', msg: 'request completed', route: fields.route });
    },
  );

  it('falls back to the pino call for a logger that changes lines (mixin, message key)', async () => {
    const { log, lines } = logger({ mixin: () => ({ extra: 1 }), messageKey: 'message' });
    writeLine(log, 'info', fields, 'request completed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(JSON.parse(lines[0]!)).toMatchObject({ extra: 1, message: 'request completed', responseTime: 3 });
  });
});
