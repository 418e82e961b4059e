import type { RequestHandler } from 'express';
import type { OpenApiDocument } from '../openapi/document.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export type RouteTemplate = { path: string; methods: string[] };

/**
 * Finds the OpenAPI path template (`/v1/agents/{agentId}/calls`) a request path belongs to. Literal
 * segments win over parameters (`/calls/search` before `/calls/{callId}`).
 */
export function routeMatcher(document: OpenApiDocument): (path: string) => RouteTemplate | undefined {
  const routes = Object.entries(document.paths ?? {})
    .map(([path, item]) => ({
      path,
      pattern: new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
      params: (path.match(/\{/g) ?? []).length,
      methods: METHODS.filter((m) => (item as Record<string, unknown>)[m]).map((m) => m.toUpperCase()),
    }))
    .sort((a, b) => a.params - b.params);
  return (path) => {
    const route = routes.find((r) => r.pattern.test(path));
    return route ? { path: route.path, methods: route.methods } : undefined;
  };
}

/**
 * Matches the request path once, on arrival (routers later strip their mount path from `req.url`),
 * for everything that reports by route: metrics, the request log line, 404/405.
 */
export function matchRoute(match: (path: string) => RouteTemplate | undefined): RequestHandler {
  return (req, _res, next) => {
    req.routeTemplate = match(req.path);
    next();
  };
}
