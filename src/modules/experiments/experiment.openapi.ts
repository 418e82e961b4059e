import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, PaginationQuerySchema } from '../../openapi/common.js';
import { agentOperations, pathParams, resourceOperations } from '../../openapi/operations.js';
import { CreateExperimentSchema, ExperimentResultsSchema, ExperimentSchema } from './experiment.schemas.js';

export function registerExperimentPaths(registry: OpenAPIRegistry): void {
  const register = agentOperations(registry, 'Experiments');
  const experiments = resourceOperations(register, {
    path: '/v1/agents/{agentId}/experiments',
    permission: 'agents',
    operation: 'Experiment',
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
  const results = '/v1/agents/{agentId}/experiments/{experimentId}/results';
  register({
    method: 'get',
    path: results,
    operationId: 'getExperimentResults',
    permission: 'agents:read',
    summary:
      'Results per variant (agents:read): calls, done rate with a 95% interval and a test against the first variant, duration, outcomes',
    description:
      'Counts the calls reported to the agent (`POST /v1/agents/{agentId}/calls`) whose `call_id` was routed to a variant by `POST /v1/runtime/route`; trashed calls are left out. `done_rate_interval` is the 95% Wilson score interval; `done_rate_p_value` the two-sided p-value of the pooled two-proportion z-test against the first variant. `outcomes` has the distribution of every enum and boolean analysis field of the agent.',
    request: { params: pathParams(results) },
    responses: { 200: json(ExperimentResultsSchema, 'The results') },
  });
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
