import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Reads `.env` from the working directory into process.env when the file exists, with Node's own
 * parser (process.loadEnvFile). A variable already set in the real environment wins over the file.
 * Returns the file read, or null.
 */
export function loadDotEnv(file = '.env'): string | null {
  const resolved = path.resolve(file);
  if (!existsSync(resolved)) return null;
  if (typeof process.loadEnvFile !== 'function') {
    throw new Error(
      `${resolved} exists, but reading it needs Node 20.12 or newer: upgrade Node or export the variables`,
    );
  }
  process.loadEnvFile(resolved);
  return resolved;
}
