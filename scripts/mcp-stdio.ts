/**
 * The MCP server over stdio, for hosts that spawn a process (`npm run mcp -- --base-url URL`): the
 * same tools as /mcp, made from the running server's /v1/openapi.json, each call a REST request to
 * that server through the typed client (clients/typescript) with the key in VAM_API_KEY (or the
 * dashboard token in VAM_TOKEN). stdout carries the protocol only; everything else goes to stderr.
 */
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createVoiceAgentClient, type ClientOptions, type VoiceAgentClient } from '../clients/typescript/index.js';
import { createMcpServer, type Dispatch } from '../src/modules/mcp/mcp-server.js';
import { toolsFromDocument, visibleTools } from '../src/modules/mcp/mcp-tools.js';

type Settings = { client: ClientOptions; kind: 'api_key' | 'token'; tools: 'read' | 'all' };

function settings(argv: string[], env: NodeJS.ProcessEnv): Settings {
  const { values } = parseArgs({
    args: argv,
    options: { 'base-url': { type: 'string' }, tools: { type: 'string' } },
    strict: true,
  });
  const baseUrl = values['base-url'] ?? env.VAM_BASE_URL;
  if (!baseUrl) throw new Error('--base-url (or VAM_BASE_URL) is required, e.g. --base-url http://localhost:3000');
  const tools = values.tools ?? env.MCP_TOOLS ?? 'all';
  if (tools !== 'read' && tools !== 'all') throw new Error('--tools (or MCP_TOOLS) must be read or all');
  if (env.VAM_API_KEY) return { client: { baseUrl, apiKey: env.VAM_API_KEY }, kind: 'api_key', tools };
  if (env.VAM_TOKEN) return { client: { baseUrl, token: env.VAM_TOKEN }, kind: 'token', tools };
  throw new Error('VAM_API_KEY (an API key) or VAM_TOKEN (a dashboard login token) is required');
}

/** Each tool call as a request of the typed client: its base URL, credentials and JSON handling. */
function clientDispatch(client: VoiceAgentClient): Dispatch {
  // The tool has already filled in the path and query (`target`): the generic form of the client's call.
  const request = client.request as (
    method: string,
    url: string,
    init: { headers: Record<string, string>; body?: unknown; redirect: RequestRedirect; parseAs: 'text' },
  ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  return async ({ method, target, headers, body }) => {
    const { data, error, response } = await request(method.toLowerCase(), target, {
      headers,
      ...(body !== undefined ? { body } : {}),
      redirect: 'manual',
      parseAs: 'text', // an export answers CSV or NDJSON: JSON is parsed here, by its content type
    });
    const json = response.headers.get('content-type')?.includes('json');
    const text = data ?? error;
    return {
      status: response.status,
      body: json && typeof text === 'string' && text !== '' ? JSON.parse(text) : text || undefined,
    };
  };
}

async function main(): Promise<void> {
  const config = settings(process.argv.slice(2), process.env);
  const client = createVoiceAgentClient(config.client);
  const { data: document, response } = await client.GET('/v1/openapi.json');
  if (!response.ok || !document)
    throw new Error(`${config.client.baseUrl}/v1/openapi.json answered ${response.status}`);
  // The key's permissions are not readable with the key itself: the server refuses what it may not do.
  const tools = visibleTools(toolsFromDocument(document), { kind: config.kind }, config.tools);
  const version = (document as { info?: { version?: string } }).info?.version ?? '0';
  const server = createMcpServer(tools, clientDispatch(client), version);
  await server.connect(new StdioServerTransport());
  process.stderr.write(`voice-agent-management-api MCP (stdio): ${tools.length} tools from ${config.client.baseUrl}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
