import type { IncomingMessage } from 'node:http';
import { Router, type Request, type RequestHandler } from 'express';
import type { AuthContext } from '../../auth/auth-context.js';
import { MethodNotAllowedError } from '../../errors/index.js';
import { internalClientHeaders } from '../../http/client-address.js';
import { toolsFromDocument, visibleTools, type ToolCaller } from './mcp-tools.js';

export type McpRouterDeps = {
  /** The OpenAPI document the app serves (read on the first MCP request): one tool per operation. */
  document: () => object;
  /** The same authentication as /v1 (X-API-Key or Authorization: Bearer). */
  authenticate: RequestHandler;
  /** The same API-key rate limit as /v1: every MCP message counts (tools/list and initialize too). */
  rateLimit: RequestHandler[];
  /** The same JSON body parser as /v1. */
  jsonBody: RequestHandler;
  tools: 'read' | 'all';
  version: string;
};

function callerOf(auth: AuthContext): ToolCaller {
  const permissions = new Set<string>();
  for (const held of auth.organizations.values()) for (const permission of held) permissions.add(permission);
  return { kind: auth.kind, permissions };
}

/**
 * The caller's credentials, passed on unchanged to the REST request each tool call makes, and the
 * caller's address, so that a key's allow-list judges the caller rather than this server.
 */
function credentialsOf(req: Request): Record<string, string> {
  const key = req.headers['x-api-key'];
  if (typeof key === 'string' && key !== '') return { 'x-api-key': key, ...internalClientHeaders(req) };
  return { authorization: req.headers.authorization ?? '', ...internalClientHeaders(req) };
}

/**
 * Many MCP hosts can send only `Authorization: Bearer`: here it may carry an API key as well as a
 * dashboard token. Such a key is moved to X-API-Key, the header /v1 reads keys from.
 */
const bearerApiKey: RequestHandler = (req, _res, next) => {
  const match = /^Bearer\s+(svc_live_\S*)$/i.exec(req.headers.authorization ?? '');
  if (match && req.headers['x-api-key'] === undefined) {
    req.headers['x-api-key'] = match[1];
    delete req.headers.authorization;
  }
  next();
};

/** This server's own address, where the request came in: tool calls go back through it. */
function ownBaseUrl(req: Request): string {
  const address = req.socket.localAddress ?? '127.0.0.1';
  const host = address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${req.socket.localPort}`;
}

/**
 * The MCP SDK and the server built on it, imported on the first MCP request: with its schemas and
 * the fetch implementation it loads, about 5 MB of heap that an instance nobody asks over MCP never
 * holds (docs/performance.md).
 */
function importSdk() {
  return Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('./mcp-server.js')]);
}
let sdk: ReturnType<typeof importSdk> | undefined;
const loadSdk = () => (sdk ??= importSdk());

/**
 * Streamable HTTP at /mcp, stateless: every POST gets a server of its own with the tools this caller
 * may call, so nothing is kept between requests and any instance can answer any request. A tool
 * call is a REST request to this same server with the caller's credentials, through the whole /v1
 * chain, so MCP can never do what the key cannot.
 */
export function mcpRouter(deps: McpRouterDeps): Router {
  let tools: ReturnType<typeof toolsFromDocument> | undefined;
  const router = Router();
  router.post('/', bearerApiKey, deps.authenticate, ...deps.rateLimit, deps.jsonBody, async (req, res) => {
    const [{ StreamableHTTPServerTransport }, { createMcpServer, fetchDispatch }] = await loadSdk();
    tools ??= toolsFromDocument(deps.document());
    const visible = visibleTools(tools, callerOf(req.auth as AuthContext), deps.tools);
    let calls = 0;
    const dispatch = fetchDispatch(ownBaseUrl(req), credentialsOf(req));
    const server = createMcpServer(
      visible,
      // Each REST request carries the MCP request's id, numbered, so the log ties them together.
      (request) =>
        dispatch({
          ...request,
          headers: { 'x-request-id': `${req.requestId}.${++calls}`, ...request.headers },
        }),
      deps.version,
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // Typed as Node's request: the SDK would read our `req.auth` as its own AuthInfo, which the tools never use.
    const incoming: IncomingMessage = req;
    await transport.handleRequest(incoming, res, req.body);
  });
  // Stateless: no stream to resume (GET) and no session to end (DELETE).
  router.all('/', (req) => {
    throw new MethodNotAllowedError(req.method, ['POST']);
  });
  return router;
}
