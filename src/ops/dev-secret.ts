import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';

/**
 * Outside production a missing JWT_SECRET is generated once and kept in DATA_DIR, so tokens printed
 * by the first start (or the CLI) keep working after a restart. Production refuses to boot without one.
 */
export function withJwtSecret(config: Config): Config {
  if (config.JWT_SECRET || config.JWT_PUBLIC_KEY) return config;
  const file = path.resolve(config.DATA_DIR, 'jwt-secret');
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  }
  return { ...config, JWT_SECRET: readFileSync(file, 'utf8').trim() };
}

/**
 * Outside production a missing SECRETS_KEY is generated once and kept in DATA_DIR beside the JWT
 * secret, so credentials sealed by one start open after a restart. Production does not generate one:
 * a key lost with a data directory would make every sealed secret unreadable.
 */
export function withSecretsKey(config: Config): Config {
  if (config.SECRETS_KEY || config.NODE_ENV === 'production') return config;
  const file = path.resolve(config.DATA_DIR, 'secrets-key');
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  }
  return { ...config, SECRETS_KEY: readFileSync(file, 'utf8').trim() };
}
