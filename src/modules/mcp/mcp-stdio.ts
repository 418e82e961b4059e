/**
 * The MCP server over stdio, for hosts that spawn a process (`npm run mcp -- --base-url URL`): the
 * same tools as /mcp, made from the running server's /v1/openapi.json, each call a REST request to
 * that server with the key in VAM_API_KEY (or the dashboard token in VAM_TOKEN). stdout carries the
 * protocol only; everything else goes to stderr.
 */
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer, fetchDispatch } from './mcp-server.js';
import { toolsFromDocument, visibleTools } from './mcp-tools.js';

type Settings = { baseUrl: string; headers: Record<string, string>; kind: 'api_key' | 'token'; tools: 'read' | 'all' };

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
  if (env.VAM_API_KEY) return { baseUrl, headers: { 'x-api-key': env.VAM_API_KEY }, kind: 'api_key', tools };
  if (env.VAM_TOKEN) return { baseUrl, headers: { authorization: `Bearer ${env.VAM_TOKEN}` }, kind: 'token', tools };
  throw new Error('VAM_API_KEY (an API key) or VAM_TOKEN (a dashboard login token) is required');
}

async function main(): Promise<void> {
  const config = settings(process.argv.slice(2), process.env);
  const response = await fetch(`${config.baseUrl.replace(/\/+$/, '')}/v1/openapi.json`);
  if (!response.ok) throw new Error(`${config.baseUrl}/v1/openapi.json answered ${response.status}`);
  const document = (await response.json()) as { info?: { version?: string } };
  // The key's permissions are not readable with the key itself: the server refuses what it may not do.
  const tools = visibleTools(toolsFromDocument(document), { kind: config.kind }, config.tools);
  const server = createMcpServer(tools, fetchDispatch(config.baseUrl, config.headers), document.info?.version ?? '0');
  await server.connect(new StdioServerTransport());
  process.stderr.write(`voice-agent-management-api MCP (stdio): ${tools.length} tools from ${config.baseUrl}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
