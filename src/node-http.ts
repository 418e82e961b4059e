import { createRequire } from 'node:module';
import type * as NodeHttp from 'node:http';

/**
 * `node:http` loaded with `require`. An ESM `import` of it makes Node 24 read every export of the
 * module to build its namespace, and one of them loads Node's bundled undici (its `fetch`): megabytes of
 * heap and RSS (`npm run bench -- memory`) for a service that never calls `fetch`. Type-only imports are free.
 */
export const http = createRequire(import.meta.url)('node:http') as typeof NodeHttp;
