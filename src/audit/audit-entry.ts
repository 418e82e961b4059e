/** Pure: how an audit row describes a request (action name and resource) from its route pattern. */

const VERBS: Record<string, string> = { POST: 'create', PUT: 'replace', PATCH: 'update', DELETE: 'delete' };

/** `/v1/agents/:agentId/tools/:toolId` -> `/v1/agents/{agentId}/tools/{toolId}` (the OpenAPI spelling). */
export function openApiRoute(pattern: string): string {
  return pattern.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\/+$/, '') || '/';
}

/**
 * `agents.tools.update` for PATCH /v1/agents/{agentId}/tools/{toolId}; a POST whose last segment is
 * a word after an id (`.../versions/{n}/restore`, `.../rotate`) is that action itself.
 */
export function describeRoute(
  method: string,
  pattern: string,
  params: Record<string, string>,
): { action: string; resourceType: string; resourceId: string | null } {
  const segments = openApiRoute(pattern).split('/').filter(Boolean);
  const body = segments[0] === 'v1' ? segments.slice(1) : segments;
  const words = body.filter((s) => !s.startsWith('{'));
  const last = body[body.length - 1] ?? '';
  const verb = VERBS[method.toUpperCase()] ?? method.toLowerCase();
  const isCommand = method.toUpperCase() === 'POST' && body.length >= 2 && !last.startsWith('{') && isCommandWord(last);
  const nouns = isCommand ? words.slice(0, -1) : words;
  const action = [...nouns, isCommand ? last : verb].join('.');
  const lastParam = [...body].reverse().find((s) => s.startsWith('{'));
  const resourceType = nouns[nouns.length - 1] ?? 'root';
  const resourceId = lastParam ? (params[lastParam.slice(1, -1)] ?? null) : null;
  return { action, resourceType, resourceId };
}

const COMMANDS = new Set([
  'restore',
  'rotate',
  'retry',
  'redeliver',
  'revoke',
  'reprocess',
  'preview',
  'search',
  'start',
  'stop',
]);

function isCommandWord(word: string): boolean {
  return COMMANDS.has(word);
}
