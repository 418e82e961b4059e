import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { PaginationQuerySchema } from '../../openapi/common.js';
import { agentOperations, resourceOperations } from '../../openapi/operations.js';
import { CreateExperimentSchema, ExperimentSchema } from './experiment.schemas.js';

export function registerExperimentPaths(registry: OpenAPIRegistry): void {
  const experiments = resourceOperations(agentOperations(registry, 'Experiments'), {
    path: '/v1/agents/{agentId}/experiments',
    permission: 'agents',
    names: { operation: 'Experiment', noun: 'experiment' },
    schema: ExperimentSchema,
  });
  experiments.list({
    summary: "List the agent's experiments (agents:read), newest first",
    query: PaginationQuerySchema,
  });
  experiments.create({
    summary: 'Create an experiment between configuration versions (agents:write), as a draft',
    description:
      '2 to 4 variants, each a stored version (`version_id`) or the current configuration (`current: true`), weights summing to 100.',
    body: CreateExperimentSchema,
    errors: [413],
  });
  experiments.get({ summary: 'Get one experiment (agents:read)' });
  experiments.action('start', {
    summary: "Start an experiment (agents:write) after the agent's test cases pass against every variant",
    description:
      '409 CONFLICT while another experiment of the agent runs or when this one is not a draft; 409 TEST_CASES_FAILED naming the variant and the case (`variants.<i>.test_cases.<caseId>.expect.<field>`).',
    response: 'The running experiment',
    errors: [409],
  });
  experiments.action('stop', {
    summary: 'Stop a running experiment (agents:write); 409 when it does not run',
    response: 'The stopped experiment',
    errors: [409],
  });
}
