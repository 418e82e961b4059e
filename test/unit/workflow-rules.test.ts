import { describe, expect, it } from 'vitest';
import { unwrapWorkflowBody, validateWorkflow, workflowToolNames } from '../../src/modules/workflows/workflow-rules.js';

type Step = Record<string, unknown>;
const step = (id: string, next: string[], extra: Step = {}): Step => ({
  id,
  name: `Step ${id}`,
  description: `Do ${id}`,
  completion: `${id} done`,
  next: next.map((n) => ({ id: n })),
  ...extra,
});
const flow = (steps: Step[], extra: Step = {}) => ({ name: 'Intake', steps, ...extra });
const tools = new Set(['end_call', 'lookup_order']);
const problems = (input: unknown, toolNames = tools) => validateWorkflow(input, toolNames).details;
const fields = (input: unknown) => problems(input).map((d) => d.field);

describe('validateWorkflow', () => {
  it('accepts a valid workflow and fills step_type, tools and next', () => {
    const input = flow([
      step('greet', ['done'], { tools: ['lookup_order'] }),
      { id: 'done', name: 'Done', description: 'Bye', completion: 'hung up' },
    ]);
    const { workflow, details } = validateWorkflow(input, tools);
    expect(details).toEqual([]);
    expect(workflow!.steps[1]).toEqual({
      id: 'done',
      name: 'Done',
      description: 'Bye',
      completion: 'hung up',
      step_type: 'prompt',
      tools: [],
      next: [],
    });
  });

  it('names a next id that is no step with its full path', () => {
    expect(problems(flow([step('a', ['b']), step('b', ['zzz'])]))).toContainEqual({
      field: 'steps[1].next[0].id',
      message: 'No step with id "zzz"',
    });
  });

  it('refuses a step that names itself as next', () => {
    expect(problems(flow([step('a', ['a', 'b']), step('b', [])]))).toEqual([
      { field: 'steps[0].next[0].id', message: 'A step cannot be its own next step' },
    ]);
  });

  it('refuses duplicate step ids', () => {
    expect(fields(flow([step('a', ['b']), step('b', []), step('b', [])]))).toEqual(['steps[2].id']);
  });

  it('requires a terminal step', () => {
    expect(problems(flow([step('a', ['b']), step('b', ['a'])]))).toEqual([
      { field: 'steps', message: 'At least one step must be terminal (an empty next)' },
    ]);
  });

  it('requires every step to be reachable from the first', () => {
    expect(problems(flow([step('a', []), step('b', ['a']), step('c', [])]))).toEqual([
      { field: 'steps[1]', message: 'Step "b" is not reachable from the first step' },
      { field: 'steps[2]', message: 'Step "c" is not reachable from the first step' },
    ]);
  });

  it('accepts only tools of the agent', () => {
    expect(problems(flow([step('a', [], { tools: ['end_call', 'send_sms'] })]))).toEqual([
      { field: 'steps[0].tools[1]', message: '"send_sms" is not a tool of this agent' },
    ]);
    expect(fields(flow([step('a', [], { tools: ['end_call'] })]))).toEqual([]);
    expect(problems(flow([step('a', [], { tools: ['end_call'] })]), new Set())).toHaveLength(1);
  });

  it('rejects unknown keys at every level', () => {
    const input = flow([step('a', [], { colour: 'red' })], { version: 2 });
    (input.steps[0]!.next as unknown[]).push({ id: 'a', weight: 1 });
    expect(fields(input)).toEqual(expect.arrayContaining(['version', 'steps[0].colour', 'steps[0].next[0].weight']));
  });

  it('checks step_type', () => {
    expect(fields(flow([step('a', [], { step_type: 'action' })]))).toEqual([]);
    expect(fields(flow([step('a', [], { step_type: 'branch' })]))).toEqual(['steps[0].step_type']);
  });

  it.each([
    ['name', (n: number) => flow([step('a', [])], { name: 'x'.repeat(n) }), 100, 'name'],
    ['description', (n: number) => flow([step('a', [])], { description: 'x'.repeat(n) }), 500, 'description'],
    ['step id', (n: number) => flow([step('x'.repeat(n), [])]), 50, 'steps[0].id'],
    ['step name', (n: number) => flow([step('a', [], { name: 'x'.repeat(n) })]), 100, 'steps[0].name'],
    [
      'step description',
      (n: number) => flow([step('a', [], { description: 'x'.repeat(n) })]),
      20000,
      'steps[0].description',
    ],
    ['completion', (n: number) => flow([step('a', [], { completion: 'x'.repeat(n) })]), 500, 'steps[0].completion'],
    ['tools', (n: number) => flow([step('a', [], { tools: Array(n).fill('end_call') })]), 20, 'steps[0].tools'],
    [
      'next',
      (n: number) =>
        flow([
          step(
            'a',
            Array.from({ length: n }, (_, i) => `s${i}`),
          ),
          ...Array.from({ length: n }, (_, i) => step(`s${i}`, [])),
        ]),
      10,
      'steps[0].next',
    ],
    [
      'steps',
      (n: number) =>
        flow([
          step('s0', n > 1 ? ['s1'] : []),
          ...Array.from({ length: n - 1 }, (_, i) => step(`s${i + 1}`, i + 2 < n ? [`s${i + 2}`] : [])),
        ]),
      20,
      'steps',
    ],
  ])('accepts %s at its limit and refuses one more', (_label, build, limit, field) => {
    expect(fields(build(limit))).toEqual([]);
    expect(fields(build(limit + 1))).toContain(field);
  });

  it('requires name, steps and each step field, and at least one step', () => {
    expect(fields({})).toEqual(['name', 'steps']);
    expect(fields(flow([]))).toEqual(['steps']);
    expect(fields(flow([{ id: 'a', next: [] }]))).toEqual([
      'steps[0].name',
      'steps[0].description',
      'steps[0].completion',
    ]);
    expect(fields(flow([step('', [], { name: '' })]))).toEqual(
      expect.arrayContaining(['steps[0].id', 'steps[0].name']),
    );
  });

  it('lists every problem of a broken workflow at once', () => {
    const input = flow(
      [
        step('a', ['b', 'missing'], { tools: ['nope'] }),
        step('b', ['a']),
        step('b', ['a'], { extra: true }),
        step('c', ['c']),
      ],
      { name: '' },
    );
    expect(fields(input)).toEqual([
      'name',
      'steps[2].extra',
      'steps[2].id',
      'steps[0].tools[0]',
      'steps[0].next[1].id',
      'steps[3].next[0].id',
      'steps',
      'steps[3]',
    ]);
  });
});

describe('unwrapWorkflowBody', () => {
  it('accepts the workflow itself, {workflow: Workflow} and {workflow: null}', () => {
    expect(unwrapWorkflowBody({ name: 'x', steps: [] })).toEqual({
      value: { name: 'x', steps: [] },
      remove: false,
      details: [],
    });
    expect(unwrapWorkflowBody({ workflow: { name: 'x' } })).toEqual({
      value: { name: 'x' },
      remove: false,
      details: [],
    });
    expect(unwrapWorkflowBody({ workflow: null })).toEqual({ value: null, remove: true, details: [] });
  });

  it('refuses other keys beside workflow and a workflow that is not an object', () => {
    expect(unwrapWorkflowBody({ workflow: null, name: 'x' }).details).toEqual([
      { field: 'name', message: 'Unknown field' },
    ]);
    expect(unwrapWorkflowBody({ workflow: [] }).details).toEqual([
      { field: 'workflow', message: 'Must be a workflow object or null' },
    ]);
  });
});

describe('workflowToolNames', () => {
  it('lists each tool a stored workflow names once', () => {
    expect(workflowToolNames(flow([step('a', ['b'], { tools: ['x', 'y'] }), step('b', [], { tools: ['x'] })]))).toEqual(
      ['x', 'y'],
    );
    expect(workflowToolNames(null)).toEqual([]);
  });
});
