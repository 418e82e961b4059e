/**
 * Ids of the workflow steps whose `tools` name `toolName`. The workflow is read defensively: it is
 * stored jsonb, and anything that is not a step list names no tool.
 */
export function stepsNamingTool(workflow: unknown, toolName: string): string[] {
  if (typeof workflow !== 'object' || workflow === null) return [];
  const steps = (workflow as { steps?: unknown }).steps;
  if (!Array.isArray(steps)) return [];
  const ids: string[] = [];
  steps.forEach((step: unknown, index) => {
    if (typeof step !== 'object' || step === null) return;
    const { id, tools } = step as { id?: unknown; tools?: unknown };
    if (Array.isArray(tools) && tools.includes(toolName)) ids.push(typeof id === 'string' ? id : `#${index}`);
  });
  return ids;
}
