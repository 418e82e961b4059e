import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

/** Secrets never reach the log: headers and fields that carry keys, tokens or webhook secrets are cut. */
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'key',
  '*.key',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'password',
  '*.password',
];

/** JSON lines on stdout, written asynchronously so that a request never waits for the terminal. */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>): Logger {
  return pino(
    { level: config.LOG_LEVEL, redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    pino.destination({ dest: 1, sync: false, minLength: 4096 }),
  );
}
