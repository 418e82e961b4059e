import { Writable } from 'node:stream';
import { pino, type LoggerOptions } from 'pino';
import { describe, expect, it } from 'vitest';
import { devNull } from 'node:os';
import { writeLine, writesPlainLines } from '../../src/platform/pino.js';
import { createLogger, REDACT_PATHS } from '../../src/logger.js';

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

/** What src/platform/pino.ts reads of pino's private fields: an upgrade that moves them fails here. */
describe('pino internals the request log relies on', () => {
  it('still exports every symbol the fast line reads', () => {
    for (const name of [
      'lsCacheSym',
      'timeSym',
      'chindingsSym',
      'messageKeySym',
      'endSym',
      'streamSym',
      'needsMetadataGsym',
      'mixinSym',
      'hooksSym',
      'formattersSym',
      'nestedKeySym',
      'msgPrefixSym',
    ]) {
      expect(typeof Reflect.get(pino.symbols, name), name).toBe('symbol');
    }
  });

  it("judges the product's logger and its children plain, so the request log takes the fast line", () => {
    const log = createLogger({ LOG_LEVEL: 'info' }, devNull);
    expect(writesPlainLines(log)).toBe(true);
    expect(writesPlainLines(log.child({ component: 'http' }))).toBe(true);
  });

  it('judges a logger with a message prefix, a nested key or a log formatter not plain', () => {
    const { log } = logger();
    expect(writesPlainLines(log)).toBe(true);
    expect(writesPlainLines(log.child({}, { msgPrefix: '[x] ' }))).toBe(false);
    expect(writesPlainLines(logger({ nestedKey: 'payload' }).log)).toBe(false);
    expect(writesPlainLines(logger({ formatters: { log: (o) => o } }).log)).toBe(false);
  });
});
