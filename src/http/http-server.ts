import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { http } from '../node-http.js';
import type { Express } from 'express';
import { answerParserErrors } from './client-error.js';

/**
 * A stand-in for Node's constructor `base` whose objects are born with `prototype` (which leads to
 * `base.prototype`). A plain function, not a class: a class's instances get the class's own
 * prototype. `IncomingMessage` and `ServerResponse` are Node's ordinary constructor functions (Node 20
 * to 24), so applying them to the new object builds it as `new` would, with whatever Node passes.
 */
function bornWith<C extends typeof IncomingMessage | typeof ServerResponse>(base: C, prototype: InstanceType<C>): C {
  function Built(this: InstanceType<C>, ...args: unknown[]) {
    Reflect.apply(base, this, args);
  }
  Built.prototype = prototype;
  // eslint-disable-next-line no-restricted-syntax -- a constructor function standing in for Node's class (see above)
  return Built as unknown as C;
}

/** From this major version of Node on, Express's own `Object.setPrototypeOf` is the faster way (below). */
export const NODE_PLAIN_SERVER_FROM = 24;

/** The major version of the Node running this process. */
export const RUNNING_NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/**
 * The product's HTTP server for an Express app (main.ts, the tests and the scripts run this one):
 * requests Node's own parser refuses are answered in the error envelope (`answerParserErrors`), and
 * before Node 24 requests and responses are built on the app's prototypes (`app.request`,
 * `app.response`) from the start.
 *
 * Express gives every request and response those prototypes with `Object.setPrototypeOf` when it
 * takes them. In the V8 of Node 20 and 22 that makes their property accesses slow and keeps both
 * objects, with everything hung on them during the request (the router's state, the log line's
 * logger, listeners), alive through the next young-generation collections: they were copied to the
 * old generation and freed only by full collections, whose pauses made the latency's tail. Built on
 * the app's prototypes, Express finds them in place and changes nothing. On Node 20 and
 * 22 the product answers far more requests this way (`npm run bench -- chain`, docs/performance.md).
 * On Node 24 Express's own way is the faster one (less CPU per request than built on the
 * prototypes, and no more promotion), so from Node 24 on the server is Node's plain one.
 */
export function createHttpServer(app: Express, nodeMajor = RUNNING_NODE_MAJOR): Server {
  const server =
    nodeMajor >= NODE_PLAIN_SERVER_FROM
      ? http.createServer(app)
      : http.createServer(
          {
            IncomingMessage: bornWith(http.IncomingMessage, app.request),
            ServerResponse: bornWith(http.ServerResponse, app.response),
          },
          app,
        );
  answerParserErrors(server);
  return server;
}
