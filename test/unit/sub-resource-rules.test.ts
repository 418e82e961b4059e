import { describe, expect, it } from 'vitest';
import { berlinDate, employeeStatusPayload } from '../../src/modules/employees/employee-event.js';
import { duplicateSlotnummern } from '../../src/modules/forwarding-slots/forwarding-slot.schemas.js';
import { stepsNamingTool } from '../../src/modules/tools/workflow-tools.js';

describe('stepsNamingTool', () => {
  const workflow = {
    steps: [
      { id: 'a', tools: ['lookup', 'transfer'] },
      { id: 'b', tools: [] },
      { id: 'c', tools: ['transfer'] },
      { tools: ['transfer'] },
    ],
  };

  it('names every step whose tools include the name', () => {
    expect(stepsNamingTool(workflow, 'transfer')).toEqual(['a', 'c', '#3']);
    expect(stepsNamingTool(workflow, 'lookup')).toEqual(['a']);
    expect(stepsNamingTool(workflow, 'unused')).toEqual([]);
  });

  it.each([null, {}, { steps: 'x' }, { steps: [null, 5, { id: 'x', tools: 'transfer' }] }, 'text'])(
    'finds nothing in %j',
    (value) => {
      expect(stepsNamingTool(value, 'transfer')).toEqual([]);
    },
  );
});

describe('duplicateSlotnummern', () => {
  it('reports every repeat after the first occurrence', () => {
    expect(
      duplicateSlotnummern([
        { slotnummer: '01' },
        { slotnummer: '02' },
        { slotnummer: '01' },
        {},
        { slotnummer: '01' },
      ]),
    ).toEqual([
      { field: 'slots[2].slotnummer', message: 'Duplicate slotnummer 01 (also in slots[0])' },
      { field: 'slots[4].slotnummer', message: 'Duplicate slotnummer 01 (also in slots[0])' },
    ]);
  });

  it('ignores anything that is not a list of rows', () => {
    expect(duplicateSlotnummern(undefined)).toEqual([]);
    expect(duplicateSlotnummern([null, 'x', { slotnummer: 1 }, { slotnummer: 1 }])).toEqual([]);
  });
});

describe('employee status event', () => {
  it('takes the day in Berlin, not in UTC', () => {
    expect(berlinDate(new Date('2026-11-21T22:59:59Z'))).toBe('2026-11-21');
    expect(berlinDate(new Date('2026-11-21T23:00:00Z'))).toBe('2026-11-22');
    expect(berlinDate(new Date('2026-06-30T22:00:00Z'))).toBe('2026-07-01');
  });

  it('falls back to the new status as the reason and today as the start date', () => {
    const employee = {
      id: 'e',
      agent_id: 'a',
      name: 'Erika',
      phone_number: null,
      email: null,
      status: 'krank' as const,
      active: true,
      get_mail: false,
      back_at_work_at: null,
      notdienst_bereich: null,
      created_at: new Date(),
      updated_at: new Date(),
    };
    const payload = employeeStatusPayload({
      employee,
      previousStatus: 'anwesend',
      agentName: 'Zentrale',
      details: { reasons: [] },
      at: new Date('2026-03-02T10:00:00Z'),
    });
    expect(payload).toMatchObject({
      agents: ['Zentrale'],
      reasons: ['krank'],
      start_date: '2026-03-02',
      substitute: null,
      responsibilities: null,
    });
  });
});
