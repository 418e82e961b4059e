import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  access,
  AGENT_ROUTE_ERRORS,
  anyAuth,
  errorResponses,
  json,
  jsonBody,
  paginated,
  PaginationQuerySchema,
} from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { CreateExperimentSchema, ExperimentResultsSchema, ExperimentSchema } from './experiment.schemas.js';

const AgentParams = z.object({ agentId: z.uuid() });
const ExperimentParams = z.object({ agentId: z.uuid(), experimentId: z.uuid() });

export function registerExperimentPaths(registry: OpenAPIRegistry): void {
  const tags = ['Experiments'];
  const base = '/v1/agents/{agentId}/experiments';
  registry.registerPath({
    method: 'get',
    path: base,
    operationId: 'listExperiments',
    ...access('agents:read', 'agent'),
    tags,
    summary: "List the agent's experiments (agents:read), newest first",
    security: anyAuth,
    request: { params: AgentParams, query: PaginationQuerySchema },
    responses: {
      200: json(paginated(ExperimentSchema), 'A page of experiments'),
      ...errorResponses(...AGENT_ROUTE_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: base,
    operationId: 'createExperiment',
    ...access('agents:write', 'agent'),
    tags,
    summary: 'Create an experiment between configuration versions (agents:write), as a draft',
    description:
      '2 to 4 variants, each a stored version (`version_id`) or the current configuration (`current: true`), weights summing to 100.',
    security: anyAuth,
    request: { params: AgentParams, body: jsonBody(CreateExperimentSchema) },
    responses: { 201: json(ExperimentSchema, 'The new experiment'), ...errorResponses(...AGENT_ROUTE_ERRORS, 413) },
  });
  registry.registerPath({
    method: 'get',
    path: `${base}/{experimentId}`,
    operationId: 'getExperiment',
    ...access('agents:read', 'agent'),
    tags,
    summary: 'Get one experiment (agents:read)',
    security: anyAuth,
    request: { params: ExperimentParams },
    responses: { 200: json(ExperimentSchema, 'The experiment'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'get',
    path: `${base}/{experimentId}/results`,
    operationId: 'getExperimentResults',
    ...access('agents:read', 'agent'),
    tags,
    summary: 'Results per variant (agents:read): calls, done rate with a 95% interval and a test against the first variant, duration, outcomes',
    description:
      "Counts the calls reported to the agent (`POST /v1/agents/{agentId}/calls`) whose `call_id` was routed to a variant by `POST /v1/runtime/route`; trashed calls are left out. `done_rate_interval` is the 95% Wilson score interval; `done_rate_p_value` the two-sided p-value of the pooled two-proportion z-test against the first variant. `outcomes` has the distribution of every enum and boolean analysis field of the agent.",
    security: anyAuth,
    request: { params: ExperimentParams },
    responses: { 200: json(ExperimentResultsSchema, 'The results'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'post',
    path: `${base}/{experimentId}/start`,
    operationId: 'startExperiment',
    ...access('agents:write', 'agent'),
    tags,
    summary: "Start an experiment (agents:write) after the agent's test cases pass against every variant",
    description:
      '409 CONFLICT while another experiment of the agent runs or when this one is not a draft; 409 TEST_CASES_FAILED naming the variant and the case (`variants.<i>.test_cases.<caseId>.expect.<field>`).',
    security: anyAuth,
    request: { params: ExperimentParams },
    responses: { 200: json(ExperimentSchema, 'The running experiment'), ...errorResponses(...AGENT_ROUTE_ERRORS, 409) },
  });
  registry.registerPath({
    method: 'post',
    path: `${base}/{experimentId}/stop`,
    operationId: 'stopExperiment',
    ...access('agents:write', 'agent'),
    tags,
    summary: 'Stop a running experiment (agents:write); 409 when it does not run',
    security: anyAuth,
    request: { params: ExperimentParams },
    responses: { 200: json(ExperimentSchema, 'The stopped experiment'), ...errorResponses(...AGENT_ROUTE_ERRORS, 409) },
  });
}
