import type { Express } from 'express';
import type { OpenApiDocument } from '../../src/openapi/document.js';

export const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export type Operation = {
  method: HttpMethod;
  /** OpenAPI spelling: `/v1/agents/{agentId}/contacts`. */
  path: string;
  /** No credentials needed (`security: []`). */
  public: boolean;
  /** Only the dashboard token (`BearerAuth` alone). */
  tokenOnly: boolean;
  /** The declared `x-permission` and `x-agent-scope` (src/openapi/common.ts `access`), as the document says. */
  permission: unknown;
  /** `x-permissions`: every permission an operation needs when it needs several (the first is `permission`). */
  permissions: unknown;
  agentScope: unknown;
};

type DocumentOperation = {
  security?: Record<string, string[]>[];
  'x-permission'?: unknown;
  'x-permissions'?: unknown;
  'x-agent-scope'?: unknown;
};

/** Every operation of the OpenAPI document (webhook payload descriptions are not operations). */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation = (item as Record<string, DocumentOperation | undefined>)[method];
      if (!operation) continue;
      const security = operation.security ?? [];
      out.push({
        method,
        path,
        public: security.length === 0,
        tokenOnly: security.length > 0 && security.every((s) => Object.keys(s).every((k) => k === 'BearerAuth')),
        permission: operation['x-permission'],
        permissions: operation['x-permissions'],
        agentScope: operation['x-agent-scope'],
      });
    }
  }
  return out.sort(byRoute);
}

type Layer = {
  rawPath?: string;
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
};

/**
 * The Express route table: every method + path a router answers, with mount paths joined and
 * written the OpenAPI way (`:agentId` -> `{agentId}`).
 */
export function routeTableOf(app: Express): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const path = join(prefix, layer.route.path);
        for (const [method, on] of Object.entries(layer.route.methods))
          if (on && method !== '_all') out.push({ method, path });
      } else if (layer.handle.stack) {
        walk(layer.handle.stack, join(prefix, layer.rawPath ?? ''));
      }
    }
  };
  walk(app.router.stack as Layer[], '');
  return out.map((r) => ({ ...r, path: r.path.replace(/:(\w+)/g, '{$1}') })).sort(byRoute);
}

function join(prefix: string, path: string): string {
  const joined = `${prefix}/${path}`.replace(/\/+/g, '/');
  return joined.length > 1 ? joined.replace(/\/$/, '') : joined;
}

function byRoute(a: { method: string; path: string }, b: { method: string; path: string }): number {
  return a.path === b.path ? a.method.localeCompare(b.method) : a.path.localeCompare(b.path);
}

/** The path with each `{param}` replaced by `ids[param]` (or `fallback`). */
export function fillPath(path: string, ids: Record<string, string>, fallback: string): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => ids[name] ?? fallback);
}
