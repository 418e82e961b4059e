import type { Request, RequestHandler, Response, Router } from 'express';
import { z } from 'zod';
import type { WriteConditions } from '../api/entity-tag.js';
import { parse } from '../api/validate.js';
import type { AuthContext } from '../auth/auth-context.js';
import { sendResource, writeConditions } from './entity-tag.js';
import { authOf } from './request.js';

// The shape most routes share, written once: the path's parameters parsed (a malformed one is a 400
// naming it), one service call with the caller and those parameters, and the answer written one way:
//
//   route.get('/:callId', callParams).resource((auth, { agentId, callId }) => calls.get(auth, agentId, callId));
//
// The call gets the request for its body, query and write conditions. A route that does more
// (streams, picks its status from the result, negotiates the content type) stays a handler of its own.

type Call<S extends z.ZodType, R> = (auth: AuthContext, params: z.output<S>, req: Request) => Promise<R>;

/** A write checked against the agent's test cases: the resource and, on a dry run, the cases it fails. */
export type CheckedWrite = { resource: unknown; failingTestCases: readonly string[] };

/** The parameters of a route with none in its path (a router mounted at a fixed path). */
const noParams = z.object({});

function answers<S extends z.ZodType>(params: S, register: (handler: RequestHandler) => void) {
  const route = <R>(call: Call<S, R>, answer: (req: Request, res: Response, result: R) => void) =>
    register(async (req, res) => {
      const parsed = parse(params, req.params);
      answer(req, res, await call(authOf(req), parsed, req));
    });
  return {
    /** The call's result as JSON, with `status` (200 unless given). */
    json: (call: Call<S, unknown>, status = 200) => route(call, (_, res, result) => res.status(status).json(result)),
    /** The call's result as one resource with its ETag (`sendResource`: 304 on a matching If-None-Match). */
    resource: (call: Call<S, unknown>, status = 200) =>
      route(call, (req, res, result) => sendResource(req, res, result, { status })),
    /** 204 without a body once the call is done (a delete). */
    noContent: (call: Call<S, unknown>) => route(call, (_, res) => res.status(204).end()),
    /**
     * A create or update that may be a dry run (`dry_run=true`; `If-Match` too): the call gets the
     * conditions, the answer is the resource with its ETag (`status` for a real write), or the dry
     * run's 200 with `Dry-Run` and the saved test cases it would make fail.
     */
    checkedWrite: (
      call: (
        auth: AuthContext,
        params: z.output<S>,
        req: Request,
        conditions: WriteConditions,
      ) => Promise<CheckedWrite>,
      status = 200,
    ) =>
      register(async (req, res) => {
        const parsed = parse(params, req.params);
        const conditions = writeConditions(req, { dryRunnable: true });
        const { resource, failingTestCases } = await call(authOf(req), parsed, req, conditions);
        sendResource(req, res, resource, { status, dryRun: conditions.dryRun, failingTestCases });
      }),
  };
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * The routes of `router` in that shape: `route.<method>(path, params)` then how it answers
 * (`json`, `resource`, `noContent`, `checkedWrite`). Without `params` the path has none.
 */
export function routesOf(router: Router) {
  const method =
    (name: Method) =>
    <S extends z.ZodType = typeof noParams>(path: string, params?: S) =>
      answers((params ?? noParams) as S, (handler) => router[name](path, handler));
  return {
    get: method('get'),
    post: method('post'),
    put: method('put'),
    patch: method('patch'),
    delete: method('delete'),
  };
}
