import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody } from '../../openapi/common.js';
import { agentOperations, resourceOperations } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import {
  RunTestCasesRequestSchema,
  SimulateRequestSchema,
  SimulationSchema,
  SuggestionsSchema,
  TestCaseInputSchema,
  TestCaseSchema,
  TestRunSchema,
} from './simulation.schemas.js';

const agentId = z.uuid();

export function registerSimulationPaths(registry: OpenAPIRegistry): void {
  const register = agentOperations(registry, 'Call simulation');
  register({
    method: 'post',
    path: '/v1/agents/{agentId}/simulate',
    operationId: 'simulateCall',
    permission: 'agents:read',
    summary: 'What happens to a call at a given moment, without a call (agents:read)',
    description:
      'Availability, routing (self, backup, vacation backup), the greeting the caller hears, the transfer targets and the enabled tools, decided by the same code as GET /status and the greeting preview. `changes` (an agent PATCH body, validated like PATCH) and `version` (a stored configuration version) are applied in memory only. What the caller may not read is not looked up: without contacts:read the caller is simulated as unknown (`contact` null, no names or tags in the greeting), without calls:read as one without calls today.',
    request: {
      params: z.object({ agentId }),
      body: jsonBody(SimulateRequestSchema, {
        examples: {
          christmasEve: {
            summary: 'A known caller on Christmas Eve, with the planned closure not yet saved',
            value: {
              at: '2026-12-24T19:30:00+01:00',
              caller_number: '+491701234567',
              changes: {
                schedule: {
                  timezone: 'Europe/Berlin',
                  rules: [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }],
                  exceptions: [{ date: '2026-12-24', closed: true, note: 'Heiligabend' }],
                },
              },
            },
          },
          storedVersion: {
            summary: 'Version 3 on a Monday morning',
            value: { at: '2026-11-23T10:00:00+01:00', version: 3 },
          },
        },
      }),
    },
    responses: { 200: json(SimulationSchema, 'The simulated call') },
    errors: [413],
  });
  const cases = resourceOperations(register, {
    path: '/v1/agents/{agentId}/test-cases',
    permission: 'agents',
    operation: 'TestCase',
    noun: 'case',
    param: 'caseId',
    schema: TestCaseSchema,
  });
  cases.list({
    summary: "The agent's saved test cases, oldest first (agents:read)",
    response: 'Every test case (at most 200)',
  });
  cases.create({
    summary: 'Save a test case (agents:write); at most 200 per agent (409)',
    description:
      '`expect` holds at least one of its fields; each one given must match the simulation of `input` (`greeting_contains`: a case-insensitive part of the greeting text; `transfer_employee_id`: the employee of the first available transfer target).',
    body: TestCaseInputSchema,
    response: 'The saved case',
    errors: [409, 413],
  });
  cases.delete({ summary: 'Delete a test case (agents:write)' });
  register({
    method: 'post',
    path: '/v1/agents/{agentId}/test-cases/run',
    operationId: 'runTestCases',
    permission: 'agents:read',
    summary: 'Run every saved case against the configuration, a stored version, or unsaved changes (agents:read)',
    description:
      'The verdicts read everything a call reads, exactly as `require_passing_test_cases` does. A greeting chosen with the caller’s contact (without contacts:read) or the caller’s calls today (without calls:read) is reported as `actual: null`.',
    request: {
      params: z.object({ agentId }),
      body: jsonBody(RunTestCasesRequestSchema, { example: { changes: { vacation_mode: true } } }),
    },
    responses: { 200: json(TestRunSchema, 'One result per case') },
    errors: [413],
  });
  register({
    method: 'post',
    path: '/v1/agents/{agentId}/test-cases/suggest',
    operationId: 'suggestTestCases',
    permission: 'agents:read',
    summary: "Cases that pin today's behaviour at the moments that matter (agents:read; not stored)",
    description:
      'A weekday inside and outside the hours, Saturday, Sunday, the next public holiday of the agent’s Bundesland, 24 and 31 December, the next schedule exception, a night call, and (with contacts:read) a known caller’s greeting (left out of `expect` when it depends on the calls of today and the requester lacks calls:read). Each is a body the create route accepts as it is, and passes against the configuration of now.',
    request: { params: z.object({ agentId }) },
    responses: { 200: json(SuggestionsSchema, 'The suggested cases') },
  });
}
