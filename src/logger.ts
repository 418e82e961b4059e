import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { LogDestination } from './log-destination.js';

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
  'sip',
  'sip_credentials',
  'body.sip',
  'input.sip',
];

/**
 * JSON lines on stdout (or `destination`, a file descriptor or path), written in batches at most
 * 10 ms apart (`LogDestination`): a request never waits for the terminal or pays a system call of
 * its own, and a line is out 10 ms after it was logged.
 */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, destination: number | string = 1): Logger {
  return pino(
    { level: config.LOG_LEVEL, redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    new LogDestination(destination),
  );
}
