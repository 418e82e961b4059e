import type { Request, RequestHandler } from 'express';
import type { AuditRecorder } from '../audit/audit-recorder.js';
import { isWriteMethod, runWithRequestContext, type RequestContext } from '../audit/request-context.js';

/** The matched route as a pattern: the mount path with its parameter values put back as `:name`. */
function routePattern(req: Request): string | undefined {
  if (!req.route) return undefined;
  const params = Object.entries((req.params ?? {}) as Record<string, string>);
  const base = req.baseUrl
    .split('/')
    .map((segment) => {
      const match = params.find(([, value]) => value === segment || encodeURIComponent(value) === segment);
      return match ? `:${match[0]}` : segment;
    })
    .join('/');
  const path = typeof req.route.path === 'string' ? req.route.path : '';
  return `${base}${path === '/' ? '' : path}`;
}

/**
 * Puts a write request's context (request id, actor, route) in AsyncLocalStorage, where the audit
 * recorder reads it when a service's audited transaction (src/audit/audited-transactions.ts)
 * writes the row. A successful write that opened no transaction gets its row written here, just
 * before the response is sent.
 */
export function auditContext(recorder: AuditRecorder): RequestHandler {
  return (req, res, next) => {
    // Reads are never audited: they run without a context (and without its AsyncLocalStorage hop).
    if (!isWriteMethod(req.method)) return next();
    const context: RequestContext = {
      requestId: req.requestId,
      method: req.method,
      auth: req.auth,
      route: () => routePattern(req),
      params: () => (req.params ?? {}) as Record<string, string>,
      note: {},
      audited: false,
      finished: false,
    };
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    res.end = ((...args: unknown[]) => {
      // A dry run changed nothing: nothing to audit.
      if (context.audited || context.finished || res.get('Dry-Run') === 'true') {
        context.finished = true;
        return end(...args);
      }
      void recorder.afterResponse(context, res.statusCode).finally(() => {
        context.finished = true;
        end(...args);
      });
      return res;
    }) as typeof res.end;
    runWithRequestContext(context, () => next());
  };
}
