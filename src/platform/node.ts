import { createRequire } from 'node:module';
import type * as NodeHttp from 'node:http';
import { Server as NetServer } from 'node:net';

/*
 * The fence around what the service relies on in Node beyond its documented promises (Node 20 to
 * 24). test/unit/platform-node.test.ts and test/unit/startup-modules.test.ts pin it
 * (docs/upgrading-libraries.md).
 */

/**
 * `node:http` loaded with `require`. An ESM `import` of it makes Node 24 read every export of the
 * module to build its namespace, and one of them loads Node's bundled undici (its `fetch`): megabytes of
 * heap and RSS (`npm run bench -- memory`) for a service that never calls `fetch`. Type-only imports are free.
 */
export const http = createRequire(import.meta.url)('node:http') as typeof NodeHttp;

/**
 * Stops `server` accepting connections and calls `done` once every open one has closed, without
 * touching the open ones: net.Server's `close`, not http.Server's, which also cuts every idle
 * keep-alive connection at once (Node 19 on) and so a request a client is sending on one.
 */
export function stopAccepting(server: NodeHttp.Server, done: () => void): void {
  NetServer.prototype.close.call(server, () => done());
}
