import { describe, expect, it } from 'vitest';
import { describeRoute, openApiRoute } from '../../src/audit/audit-entry.js';
import {
  diffConfigurations,
  formatPath,
  type AgentConfiguration,
} from '../../src/modules/agent-versions/agent-configuration.js';

describe('describeRoute (audit action names)', () => {
  it('names create/replace/update/delete by method and commands by their word', () => {
    const params = { agentId: 'a1', toolId: 't1', version: '3', orgId: 'o1' };
    expect(describeRoute('POST', '/v1/agents/:agentId/tools', params)).toEqual({
      action: 'agents.tools.create',
      resourceType: 'tools',
      resourceId: 'a1',
    });
    expect(describeRoute('PATCH', '/v1/agents/:agentId/tools/:toolId', params)).toEqual({
      action: 'agents.tools.update',
      resourceType: 'tools',
      resourceId: 't1',
    });
    expect(describeRoute('PUT', '/v1/agents/:agentId/workflow', params).action).toBe('agents.workflow.replace');
    expect(describeRoute('DELETE', '/v1/agents/:agentId', params).action).toBe('agents.delete');
    expect(describeRoute('POST', '/v1/agents/:agentId/versions/:version/restore', params)).toEqual({
      action: 'agents.versions.restore',
      resourceType: 'versions',
      resourceId: '3',
    });
    expect(describeRoute('POST', '/v1/organization/:orgId/webhook-secret/rotate', params).action).toBe(
      'organization.webhook-secret.rotate',
    );
  });

  it('spells routes the OpenAPI way', () => {
    expect(openApiRoute('/v1/agents/:agentId/tools/:toolId')).toBe('/v1/agents/{agentId}/tools/{toolId}');
    expect(openApiRoute('/v1/me/')).toBe('/v1/me');
  });
});

describe('formatPath and diffConfigurations', () => {
  it('formats paths with dots, [i] and quoted odd keys', () => {
    expect(formatPath(['workflow', 'steps', 2, 'next'])).toBe('workflow.steps[2].next');
    expect(formatPath(['metadata', 'a b', 0])).toBe('metadata["a b"][0]');
    expect(formatPath([])).toBe('');
  });

  const base = (extra: Partial<AgentConfiguration> = {}): AgentConfiguration => ({
    prompt: 'p',
    workflow: null,
    tools: [
      {
        id: '1',
        name: 'a',
        display_name: null,
        description: null,
        tool_type: 'end_call',
        config: {},
        is_enabled: true,
        priority: 0,
        employee_id: null,
      },
    ],
    ...extra,
  });

  it('addresses tools by name, so inserting one does not shift the others', () => {
    const before = base();
    const after = base({
      tools: [{ ...before.tools[0]!, id: '0', name: 'b_first' }, before.tools[0]!],
    });
    expect(diffConfigurations(before, after).map((c) => [c.op, c.path])).toEqual([['added', 'tools.b_first']]);
  });

  it('reports added, removed and changed values sorted by path', () => {
    const from = base({ workflow: { name: 'w', steps: [{ id: 'a', next: [] }] } });
    const to = base({ prompt: 'q', workflow: null, tools: [] });
    expect(diffConfigurations(from, to)).toEqual([
      { op: 'changed', path: 'prompt', old_value: 'p', new_value: 'q' },
      { op: 'removed', path: 'tools.a', old_value: from.tools[0] },
      { op: 'changed', path: 'workflow', old_value: from.workflow, new_value: null },
    ]);
    expect(diffConfigurations(from, from)).toEqual([]);
  });
});
