import { executionAsyncResource } from 'node:async_hooks';
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

/** One of Node's tick objects, kept for as long as the process runs (`keepTickObjectShape`). */
let keptTickObject: object | undefined;

/**
 * Keeps one `process.nextTick` tick object alive, and with it the hidden classes V8 builds for that
 * object literal (its first keys are computed: Node's async-id symbols). The literal's feedback holds
 * those classes weakly: a full collection while no tick object lives (the idle trim's memory-reducing
 * one right after the start, say) frees them, the next tick builds new ones, and V8 marks the literal
 * megamorphic for good. Every optimised function that inlines `nextTick` (the stream code each
 * request runs) then defines its tick objects through the runtime: a few per cent of the uncached
 * chain's instructions per request (`npm run bench -- compare` with BENCH_INSTRUCTIONS, cache off),
 * on some starts and not others. A class lives as long as an object of it or of one derived from it.
 *
 * A nextTick callback's resource is its tick object. Asking for it marks that resources are asked
 * for, which changes nothing unless async hooks are enabled (AsyncLocalStorage on Node 20, which asks
 * for them itself).
 */
export function keepTickObjectShape(): void {
  process.nextTick(() => {
    keptTickObject ??= executionAsyncResource();
  });
}
