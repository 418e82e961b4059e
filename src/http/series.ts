import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middleware that run for every request, as one: each is called in order with a `next` that calls
 * the one after it, and an error (thrown, passed to `next`, or a rejected promise) goes on to
 * Express's error handling as it would from a middleware of its own. The same behaviour as
 * registering them one by one, without the router's work per layer (path match, parameter
 * processing, promise check) for the dozen every request passes: less CPU per cached request (see
 * `npm run bench -- chain`).
 */
export function series(handlers: readonly RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction) => {
    let index = 0;
    const step = (error?: unknown): void => {
      // `next('route')` and `next('router')` mean something only to Express: handed on as they are.
      if (error !== undefined && error !== null) return done(error);
      const handler = handlers[index++];
      if (handler === undefined) return done();
      try {
        const result = handler(req, res, step) as unknown;
        if (result instanceof Promise) result.then(undefined, (e: unknown) => done(e || new Error('Rejected promise')));
      } catch (e) {
        done(e);
      }
    };
    step();
  };
}
