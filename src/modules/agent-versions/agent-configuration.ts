import diff from 'microdiff';
import { agentWritableShape } from '../agents/agent-input.schemas.js';
import { TOOL_FIELD_COLUMNS } from '../tools/tool.repository.js';

/** The agent fields a version holds and a restore writes back: exactly what PATCH may write. */
export const CONFIGURATION_AGENT_FIELDS: readonly string[] = Object.keys(
  agentWritableShape({ allowPrivateWebhookTargets: false }),
);

export const CONFIGURATION_TOOL_FIELDS = ['id', ...TOOL_FIELD_COLUMNS] as const;

export type ToolSnapshot = {
  id: string;
  name: string;
  display_name: string | null;
  description: string | null;
  tool_type: string;
  config: Record<string, unknown>;
  is_enabled: boolean;
  priority: number;
  employee_id: string | null;
};

/** The agent's whole configuration at one moment: its writable fields, the workflow and the tools (by name). */
export type AgentConfiguration = Record<string, unknown> & { workflow: unknown; tools: ToolSnapshot[] };

export type ConfigurationChange = {
  op: 'added' | 'removed' | 'changed';
  path: string;
  old_value?: unknown;
  new_value?: unknown;
};

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `['workflow', 'steps', 2, 'next']` -> `workflow.steps[2].next`; odd keys are quoted: `metadata["a b"]`. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (IDENTIFIER.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

/** Tools keyed by name, so a change reads `tools.lookup_order.config.url` rather than an index that shifts. */
function comparable(configuration: AgentConfiguration): Record<string, unknown> {
  const { tools, ...rest } = configuration;
  const byName: Record<string, unknown> = {};
  for (const tool of tools ?? []) byName[tool.name] = tool;
  return { ...rest, tools: byName };
}

/** The changes that turn configuration `from` into `to`, in a stable order (by path). */
export function diffConfigurations(from: AgentConfiguration, to: AgentConfiguration): ConfigurationChange[] {
  const changes = diff(comparable(from), comparable(to)).map((d): ConfigurationChange => {
    const path = formatPath(d.path);
    if (d.type === 'CREATE') return { op: 'added', path, new_value: d.value };
    if (d.type === 'REMOVE') return { op: 'removed', path, old_value: d.oldValue };
    return { op: 'changed', path, old_value: d.oldValue, new_value: d.value };
  });
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
