import { z } from '../../openapi/zod.js';
import { uuidField, uuidParams } from '../../api/validate.js';
import { text } from '../../validation/text.js';
import { E164 } from '../agents/agent-input.schemas.js';
import { ScheduleExceptionSchema } from '../agents/agent.schemas.js';

export const MAX_TEST_CASES = 200;

export const SIMULATION_REASONS = ['open', 'outside_hours', 'holiday', 'exception', 'vacation', 'inactive'] as const;
export const ANSWERED_VIA = ['self', 'backup', 'vacation_backup', 'none'] as const;
export type SimulationReason = (typeof SIMULATION_REASONS)[number];

const callerNumber = z
  .string()
  .transform((v) => v.replace(/[\s\-().]/g, ''))
  .pipe(z.string().regex(E164, 'Must be an E.164 phone number such as +4930123456'))
  .openapi({
    type: 'string',
    example: '+491701234567',
    description: "The caller's number; finds the caller's contact",
  });

const moment = z.iso.datetime({ offset: true, message: 'Must be an ISO 8601 date-time' });

const changes = z.record(z.string(), z.unknown()).openapi({
  description:
    'An agent PATCH body, applied in memory only and validated exactly like PATCH (400 names the field as `changes.<field>`)',
  example: { schedule: { timezone: 'Europe/Berlin', rules: [], exceptions: [{ date: '2026-12-24', closed: true }] } },
});

const version = z
  .number()
  .int('Must be an integer')
  .min(1, 'Must be at least 1')
  .openapi({ description: 'Simulate a stored configuration version (its agent fields and tools)', example: 3 });

/** What configuration a simulation or a run uses: the stored one, a stored version, plus unsaved changes. */
export const ConfigurationChoiceShape = { changes: changes.optional(), version: version.optional() };

export const SimulateRequestSchema = z
  .strictObject({
    at: moment
      .optional()
      .openapi({ description: 'When the call arrives (default: now)', example: '2026-12-24T19:30:00+01:00' }),
    caller_number: callerNumber.optional(),
    ...ConfigurationChoiceShape,
  })
  .openapi('SimulateCallRequest');

export type SimulateRequest = z.output<typeof SimulateRequestSchema>;

export const SimulationSchema = z
  .object({
    at: z.iso.datetime(),
    agent_id: z.uuid(),
    accepting_calls: z.boolean(),
    reason: z.enum(SIMULATION_REASONS).openapi({
      description:
        'open (the agent takes the call), else why not: inactive, vacation, a dated exception, a public holiday, or outside the weekly hours',
    }),
    holiday: z.object({ date: z.string(), name: z.string() }).nullable(),
    exception: z
      .union([ScheduleExceptionSchema, z.null()])
      .openapi({ description: 'The schedule exception applying at `at`' }),
    answered_by: z.object({
      agent_id: z.uuid().nullable(),
      via: z.enum(ANSWERED_VIA),
    }),
    greeting: z.object({
      text: z.string().openapi({ description: 'What the caller hears, placeholders filled ("" without a greeting)' }),
      variant_index: z.number().int().nullable(),
    }),
    contact: z
      .object({ id: z.uuid(), name: z.string().nullable() })
      .nullable()
      .openapi({ description: "The caller's contact; null without one, and always null without contacts:read" }),
    transfer_targets: z.array(
      z.object({
        slot_number: z.string().nullable().openapi({ description: 'Forwarding slot; null for a linked transfer tool' }),
        employee_id: z.uuid().nullable(),
        name: z.string(),
        status: z.string().nullable(),
        available: z.boolean(),
      }),
    ),
    tools: z.array(z.string()).openapi({ description: 'Names of the enabled tools' }),
    next_change_at: z.iso
      .datetime()
      .nullable()
      .openapi({ description: 'When the opening hours next change after `at`' }),
  })
  .openapi('CallSimulation', {
    example: {
      at: '2026-12-24T18:30:00.000Z',
      agent_id: '6f1c3c1e-2f43-4a55-9d7b-1b6d0c7f4a10',
      accepting_calls: false,
      reason: 'exception',
      holiday: null,
      exception: { date: '2026-12-24', closed: true, note: 'Heiligabend' },
      answered_by: { agent_id: '0b5d0d4e-3a53-4f43-8c8e-7a1f5c6e2b21', via: 'backup' },
      greeting: { text: 'Guten Abend Frau Schmidt, Sie sprechen mit dem Notdienst.', variant_index: 0 },
      contact: { id: '9a1d1f3c-5b64-4c1a-8e2f-3c4d5e6f7a8b', name: 'Anna Schmidt' },
      transfer_targets: [
        {
          slot_number: '01',
          employee_id: '2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f',
          name: 'Max Notdienst',
          status: 'notdienst',
          available: true,
        },
      ],
      tools: ['transfer_emergency'],
      next_change_at: '2026-12-27T07:00:00.000Z',
    },
  });

export type Simulation = z.output<typeof SimulationSchema>;

const expectShape = {
  accepting_calls: z.boolean().optional(),
  reason: z.enum(SIMULATION_REASONS).optional(),
  answered_by_agent_id: uuidField().nullable().optional(),
  greeting_contains: text({ min: 1, max: 2000 }).optional(),
  transfer_employee_id: uuidField()
    .nullable()
    .optional()
    .openapi({ description: 'The employee of the first available transfer target (null: none)' }),
};

export const TestCaseInputSchema = z
  .strictObject({
    name: text({ min: 1, max: 200, trim: true }),
    input: z.strictObject({
      at: moment.openapi({ example: '2026-12-24T19:30:00+01:00' }),
      caller_number: callerNumber.optional(),
    }),
    expect: z.strictObject(expectShape).refine((e) => Object.values(e).some((v) => v !== undefined), {
      message: 'Expect at least one of: ' + Object.keys(expectShape).join(', '),
    }),
  })
  .openapi('TestCaseInput', {
    example: {
      name: 'Heiligabend 19:30 geht an die Vertretung',
      input: { at: '2026-12-24T19:30:00+01:00', caller_number: '+491701234567' },
      expect: {
        accepting_calls: false,
        reason: 'exception',
        answered_by_agent_id: '0b5d0d4e-3a53-4f43-8c8e-7a1f5c6e2b21',
      },
    },
  });

export type TestCaseInput = z.output<typeof TestCaseInputSchema>;
export type TestCaseExpect = TestCaseInput['expect'];

export const TestCaseSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    name: z.string(),
    input: z.object({ at: z.string(), caller_number: z.string().optional() }),
    expect: z.object({
      accepting_calls: z.boolean().optional(),
      reason: z.enum(SIMULATION_REASONS).optional(),
      answered_by_agent_id: z.uuid().nullable().optional(),
      greeting_contains: z.string().optional(),
      transfer_employee_id: z.uuid().nullable().optional(),
    }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('TestCase');

export const RunTestCasesRequestSchema = z.strictObject(ConfigurationChoiceShape).openapi('RunTestCasesRequest');

export const MismatchSchema = z.object({ field: z.string(), expected: z.unknown(), actual: z.unknown() });

export const TestCaseResultSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  passed: z.boolean(),
  mismatches: z.array(MismatchSchema),
});

export type TestCaseResult = z.output<typeof TestCaseResultSchema>;

export const TestRunSchema = z
  .object({ passed: z.number().int(), failed: z.number().int(), results: z.array(TestCaseResultSchema) })
  .openapi('TestCaseRun', {
    example: {
      passed: 1,
      failed: 1,
      results: [
        { id: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b', name: 'Montag 10:00 offen', passed: true, mismatches: [] },
        {
          id: '6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b9c',
          name: 'Heiligabend 19:30 geht an die Vertretung',
          passed: false,
          mismatches: [{ field: 'reason', expected: 'exception', actual: 'outside_hours' }],
        },
      ],
    },
  });

export const SuggestionsSchema = z.object({ data: z.array(TestCaseInputSchema) }).openapi('TestCaseSuggestions');

export const testCaseParams = uuidParams('agentId', 'caseId');
