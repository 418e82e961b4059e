import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { requestFor, type ApiRequest, type McpTool } from './mcp-tools.js';

export type ApiResponse = { status: number; body: unknown };

/** Sends the HTTP request a tool call stands for, with the caller's own credentials. */
export type Dispatch = (request: ApiRequest) => Promise<ApiResponse>;

/**
 * A dispatcher over HTTP to `baseUrl` (this server's own address for /mcp, the running server for
 * stdio), so that every call passes the REST chain: authentication, rate limits, permissions, agent
 * scope, Idempotency-Key, audit log.
 */
export function fetchDispatch(
  baseUrl: string,
  headers: Record<string, string>,
  fetchImpl: typeof fetch = fetch,
): Dispatch {
  const base = baseUrl.replace(/\/+$/, '');
  return async (request) => {
    const response = await fetchImpl(`${base}${request.target}`, {
      method: request.method,
      headers: {
        accept: 'application/json',
        ...headers,
        ...request.headers,
        ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: request.body !== undefined ? JSON.stringify(request.body) : undefined,
      redirect: 'manual',
    });
    const text = await response.text();
    let body: unknown = text === '' ? undefined : text;
    if (text !== '' && response.headers.get('content-type')?.includes('json')) body = JSON.parse(text);
    return { status: response.status, body };
  };
}

type Envelope = {
  error?: { code?: string; message?: string; details?: { field?: string; message?: string }[]; request_id?: string };
};

/** A 2xx as JSON text plus structuredContent; anything else as an error result with the envelope's code and message. */
export function toolResult({ status, body }: ApiResponse): CallToolResult {
  if (status >= 200 && status < 300) {
    if (body === undefined) return { content: [{ type: 'text', text: `Done (HTTP ${status}, no content).` }] };
    const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
    return {
      content: [{ type: 'text', text: typeof body === 'string' ? body : JSON.stringify(body, null, 2) }],
      ...(isObject ? { structuredContent: body as Record<string, unknown> } : {}),
    };
  }
  if (status === 304) return { content: [{ type: 'text', text: 'Not modified (HTTP 304): the ETag still matches.' }] };
  const error = (body as Envelope | undefined)?.error;
  const lines = [`${error?.code ?? `HTTP_${status}`}: ${error?.message ?? 'The API refused the request'}`];
  for (const detail of error?.details ?? []) lines.push(`- ${detail.field ?? ''}: ${detail.message ?? ''}`);
  lines.push(`(HTTP ${status}${error?.request_id ? `, request_id ${error.request_id}` : ''})`);
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }] };
}

/**
 * An MCP server (the SDK's low-level one: the tools' input schemas are JSON Schema from the OpenAPI
 * document already) offering `tools` and answering each call through `dispatch`.
 */
export function createMcpServer(tools: readonly McpTool[], dispatch: Dispatch, version: string): Server {
  const server = new Server(
    { name: 'voice-agent-management-api', title: 'Voice Agent Management API', version },
    {
      capabilities: { tools: {} },
      instructions:
        'Tools for configuring voice agents: one tool per REST operation, named by its operationId. ' +
        'Path and query parameters and the request body fields are arguments of one object.',
    },
  );
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map(({ name, description, inputSchema, annotations }) => ({
      name,
      title: annotations.title,
      description,
      inputSchema,
      annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const call = requestFor(tool, request.params.arguments ?? {});
    if ('invalid' in call) {
      return {
        isError: true,
        content: [{ type: 'text', text: `VALIDATION_ERROR: ${call.invalid}` }],
      };
    }
    try {
      return toolResult(await dispatch(call));
    } catch {
      return { isError: true, content: [{ type: 'text', text: 'SERVICE_UNAVAILABLE: the API did not answer' }] };
    }
  });
  return server;
}
