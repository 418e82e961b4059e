import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import { http } from './node.js';

/*
 * The fence around how Express 5 and Node build a request's objects: Express gives each request and
 * response the app's prototypes (`app.request`, `app.response`, which lead to Node's) with
 * `Object.setPrototypeOf` in `app.handle`, and Node's `IncomingMessage` and `ServerResponse` are
 * plain constructor functions (Node 20 to 24), not classes. test/unit/platform-express.test.ts pins
 * both (docs/upgrading-libraries.md).
 */

/**
 * A stand-in for Node's constructor `base` whose objects are born with `prototype` (which leads to
 * `base.prototype`). A plain function, not a class: a class's instances get the class's own
 * prototype. Applying Node's constructor function to the new object builds it as `new` would, with
 * whatever Node passes.
 */
function bornWith<C extends typeof IncomingMessage | typeof ServerResponse>(base: C, prototype: InstanceType<C>): C {
  function Built(this: InstanceType<C>, ...args: unknown[]) {
    Reflect.apply(base, this, args);
  }
  Built.prototype = prototype;
  // eslint-disable-next-line no-restricted-syntax -- a constructor function standing in for Node's class (see above)
  return Built as unknown as C;
}

/**
 * `http.createServer` options under which requests and responses are born on `app`'s prototypes,
 * so that Express finds them in place and its `Object.setPrototypeOf` changes nothing.
 */
export function bornOnAppPrototypes(app: Express): {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
} {
  return {
    IncomingMessage: bornWith(http.IncomingMessage, app.request),
    ServerResponse: bornWith(http.ServerResponse, app.response),
  };
}
