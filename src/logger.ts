import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

/**
 * Secrets never reach the log. Request lines carry only id, method and URL (no headers, no bodies);
 * these paths cut keys, tokens and secrets wherever code logs an object that has them. Explicit
 * paths, not wildcards: a wildcard makes every log line walk every property.
 */
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
  'key',
  'api_key',
  'token',
  'dashboard_token',
  'secret',
  'secrets',
  'password',
];

/**
 * JSON lines on stdout (or `destination`, a file descriptor or path). Written asynchronously so a
 * request never waits for the terminal, but with no minimum buffer: each line is handed to the
 * operating system as soon as the previous write finished (within milliseconds), so a quiet instance
 * shows its lines at once and a crash loses at most the line being written.
 */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, destination: number | string = 1): Logger {
  return pino(
    { level: config.LOG_LEVEL, redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    pino.destination({ dest: destination, sync: false, minLength: 0 }),
  );
}
