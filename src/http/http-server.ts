import type { Server } from 'node:http';
import type { Express } from 'express';
import { bornOnAppPrototypes } from '../platform/express.js';
import { http } from '../platform/node.js';
import { answerParserErrors } from './client-error.js';

/** From this major version of Node on, Express's own `Object.setPrototypeOf` is the faster way (below). */
export const NODE_PLAIN_SERVER_FROM = 24;

/** The major version of the Node running this process. */
export const RUNNING_NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/**
 * The product's HTTP server for an Express app (main.ts, the tests and the scripts run this one):
 * requests Node's own parser refuses are answered in the error envelope (`answerParserErrors`), and
 * before Node 24 requests and responses are built on the app's prototypes (`app.request`,
 * `app.response`) from the start (`bornOnAppPrototypes`, src/platform/express.ts).
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
    nodeMajor >= NODE_PLAIN_SERVER_FROM ? http.createServer(app) : http.createServer(bornOnAppPrototypes(app), app);
  answerParserErrors(server);
  return server;
}
