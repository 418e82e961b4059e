import type { ErrorDetail } from '../../errors/index.js';
import { zodIssuesToDetails } from '../../errors/zod.js';
import { WorkflowSchema, type Workflow } from './workflow.schemas.js';

type Raw = Record<string, unknown>;

const asObject = (value: unknown): Raw | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Raw) : undefined;
const asArray = (value: unknown): unknown[] | undefined => (Array.isArray(value) ? value : undefined);
const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The PUT body reduced to the workflow to validate, or `remove` for `{workflow: null}`. */
export function unwrapWorkflowBody(body: unknown): { value: unknown; remove: boolean; details: ErrorDetail[] } {
  const raw = asObject(body) ?? {};
  if (!Object.hasOwn(raw, 'workflow')) return { value: raw, remove: false, details: [] };
  const details: ErrorDetail[] = Object.keys(raw)
    .filter((key) => key !== 'workflow')
    .map((key) => ({ field: key, message: 'Unknown field' }));
  if (raw.workflow === null) return { value: null, remove: true, details };
  if (!asObject(raw.workflow)) {
    details.push({ field: 'workflow', message: 'Must be a workflow object or null' });
    return { value: undefined, remove: false, details };
  }
  return { value: raw.workflow, remove: false, details };
}

type StepView = {
  index: number;
  id: string | undefined;
  next: { j: number; id: string }[];
  tools: { j: number; name: string }[];
  terminal: boolean;
};

/** What the graph checks need from each step, read defensively from the raw input. */
function stepViews(steps: unknown[]): StepView[] {
  return steps.map((step, index) => {
    const s = asObject(step) ?? {};
    const next = asArray(s.next);
    return {
      index,
      id: asString(s.id),
      next: (next ?? []).flatMap((n, j) => {
        const id = asString(asObject(n)?.id);
        return id === undefined ? [] : [{ j, id }];
      }),
      tools: (asArray(s.tools) ?? []).flatMap((t, j) => (typeof t === 'string' ? [{ j, name: t }] : [])),
      terminal: s.next === undefined || (next !== undefined && next.length === 0),
    };
  });
}

function referenceProblems(views: StepView[], toolNames: ReadonlySet<string>): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const firstIndex = new Map<string, number>();
  for (const v of views) {
    if (v.id === undefined) continue;
    if (firstIndex.has(v.id)) details.push({ field: `steps[${v.index}].id`, message: `Duplicate step id "${v.id}"` });
    else firstIndex.set(v.id, v.index);
  }
  for (const v of views) {
    for (const t of v.tools) {
      if (!toolNames.has(t.name))
        details.push({ field: `steps[${v.index}].tools[${t.j}]`, message: `"${t.name}" is not a tool of this agent` });
    }
    for (const n of v.next) {
      const field = `steps[${v.index}].next[${n.j}].id`;
      if (v.id !== undefined && n.id === v.id) details.push({ field, message: 'A step cannot be its own next step' });
      else if (!firstIndex.has(n.id)) details.push({ field, message: `No step with id "${n.id}"` });
    }
  }
  return details;
}

function graphProblems(views: StepView[]): ErrorDetail[] {
  if (views.length === 0) return [];
  const details: ErrorDetail[] = [];
  if (!views.some((v) => v.terminal))
    details.push({ field: 'steps', message: 'At least one step must be terminal (an empty next)' });
  const byId = new Map<string, StepView>();
  for (const v of views) if (v.id !== undefined && !byId.has(v.id)) byId.set(v.id, v);
  const reached = new Set<number>([0]);
  const queue = [views[0]!];
  while (queue.length > 0) {
    for (const n of queue.shift()!.next) {
      const target = byId.get(n.id);
      if (target && !reached.has(target.index)) {
        reached.add(target.index);
        queue.push(target);
      }
    }
  }
  for (const v of views) {
    if (reached.has(v.index) || v.id === undefined || byId.get(v.id) !== v) continue;
    details.push({ field: `steps[${v.index}]`, message: `Step "${v.id}" is not reachable from the first step` });
  }
  return details;
}

/**
 * Every workflow rule (docs/decisions.md) at once: field limits and unknown keys, unique step ids, `next`
 * naming existing other steps, tools naming the agent's tools, a terminal step, and every step
 * reachable from the first. Paths are relative to the workflow (`steps[1].next[0].id`).
 */
export function validateWorkflow(
  input: unknown,
  toolNames: ReadonlySet<string>,
): { workflow: Workflow | undefined; details: ErrorDetail[] } {
  const result = WorkflowSchema.safeParse(input);
  const details = result.success ? [] : zodIssuesToDetails(result.error.issues);
  const steps = asArray(asObject(input)?.steps);
  if (steps) {
    const views = stepViews(steps);
    details.push(...referenceProblems(views, toolNames), ...graphProblems(views));
  }
  return { workflow: details.length === 0 && result.success ? result.data : undefined, details };
}

/** Tool names a stored workflow uses (a tool named here cannot be deleted: 409). */
export function workflowToolNames(workflow: unknown): string[] {
  const steps = asArray(asObject(workflow)?.steps) ?? [];
  return [...new Set(stepViews(steps).flatMap((v) => v.tools.map((t) => t.name)))];
}
