/**
 * What a new agent starts with when its creator leaves a field out (the rest: column defaults).
 * Here, beside the database, rather than in the agents module, because every way of creating an
 * agent uses them: POST /v1/agents, the demo organization of the first start and the CLI.
 */
export const NEW_AGENT_DEFAULTS = {
  is_active: true,
  language: 'de',
  formality: 'formal',
  prompt: '',
  bundesland: 'DE',
} as const;
