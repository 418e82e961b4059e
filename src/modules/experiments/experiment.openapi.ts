import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody, paginated, PaginationQuerySchema } from '../../openapi/common.js';
import { agentOperations, type Operation } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import { CreateExperimentSchema, ExperimentResultsSchema, ExperimentSchema } from './experiment.schemas.js';

const AgentParams = z.object({ agentId: z.uuid() });
const ExperimentParams = z.object({ agentId: z.uuid(), experimentId: z.uuid() });

export function registerExperimentPaths(registry: OpenAPIRegistry): void {
  const register = agentOperations(registry, 'Experiments');
  const base = '/v1/agents/{agentId}/experiments';
  register({
    method: 'get',
    path: base,
    operationId: 'listExperiments',
    permission: 'agents:read',
    summary: "List the agent's experiments (agents:read), newest first",
    request: { params: AgentParams, query: PaginationQuerySchema },
    responses: { 200: json(paginated(ExperimentSchema), 'A page of experiments') },
  });
  register({
    method: 'post',
    path: base,
    operationId: 'createExperiment',
    permission: 'agents:write',
    summary: 'Create an experiment between configuration versions (agents:write), as a draft',
    description:
      '2 to 4 variants, each a stored version (`version_id`) or the current configuration (`current: true`), weights summing to 100.',
    request: { params: AgentParams, body: jsonBody(CreateExperimentSchema) },
    responses: { 201: json(ExperimentSchema, 'The new experiment') },
    errors: [413],
  });
  // The operations on one experiment: its read, its results, start and stop.
  const onOne: (Pick<Operation, 'operationId' | 'permission' | 'summary' | 'description' | 'errors'> & {
    method: 'get' | 'post';
    suffix: string;
    answer: [z.ZodType, string];
  })[] = [
    {
      method: 'get',
      suffix: '',
      operationId: 'getExperiment',
      permission: 'agents:read',
      summary: 'Get one experiment (agents:read)',
      answer: [ExperimentSchema, 'The experiment'],
    },
    {
      method: 'get',
      suffix: '/results',
      operationId: 'getExperimentResults',
      permission: 'agents:read',
      summary:
        'Results per variant (agents:read): calls, done rate with a 95% interval and a test against the first variant, duration, outcomes',
      description:
        'Counts the calls reported to the agent (`POST /v1/agents/{agentId}/calls`) whose `call_id` was routed to a variant by `POST /v1/runtime/route`; trashed calls are left out. `done_rate_interval` is the 95% Wilson score interval; `done_rate_p_value` the two-sided p-value of the pooled two-proportion z-test against the first variant. `outcomes` has the distribution of every enum and boolean analysis field of the agent.',
      answer: [ExperimentResultsSchema, 'The results'],
    },
    {
      method: 'post',
      suffix: '/start',
      operationId: 'startExperiment',
      permission: 'agents:write',
      summary: "Start an experiment (agents:write) after the agent's test cases pass against every variant",
      description:
        '409 CONFLICT while another experiment of the agent runs or when this one is not a draft; 409 TEST_CASES_FAILED naming the variant and the case (`variants.<i>.test_cases.<caseId>.expect.<field>`).',
      answer: [ExperimentSchema, 'The running experiment'],
      errors: [409],
    },
    {
      method: 'post',
      suffix: '/stop',
      operationId: 'stopExperiment',
      permission: 'agents:write',
      summary: 'Stop a running experiment (agents:write); 409 when it does not run',
      answer: [ExperimentSchema, 'The stopped experiment'],
      errors: [409],
    },
  ];
  for (const { suffix, answer, ...operation } of onOne)
    register({
      ...operation,
      path: `${base}/{experimentId}${suffix}`,
      request: { params: ExperimentParams },
      responses: { 200: json(answer[0], answer[1]) },
    });
}
