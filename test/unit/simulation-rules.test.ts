import { describe, expect, it } from 'vitest';
import { decideCall, NO_CALLER, type CallConfiguration } from '../../src/modules/agents/call-decision.js';
import { zonedParts } from '../../src/modules/agents/zoned-time.js';
import { mismatchesOf, toSimulation } from '../../src/modules/simulation/simulation-rules.js';
import { localMoment, suggestedMoments } from '../../src/modules/simulation/suggestions.js';

const schedule = {
  timezone: 'Europe/Berlin',
  rules: [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }],
};
const config = (agent: Record<string, unknown> = {}): CallConfiguration => ({
  agent: {
    id: 'a',
    name: 'Praxis',
    is_active: true,
    schedule,
    bundesland: 'BY',
    vacation_mode: false,
    vacation_end: null,
    vacation_notdienst: false,
    greeting: 'Guten Tag',
    greeting_variants: null,
    ...agent,
  } as CallConfiguration['agent'],
  backup: { id: 'b', is_active: true },
  employees: [],
  slots: [],
  tools: [],
});
const simulate = (c: CallConfiguration, at: string) =>
  toSimulation('a', new Date(at), decideCall(c, new Date(at), NO_CALLER), null);

describe('localMoment', () => {
  it('writes the wall time with the offset of that day, in winter and in summer', () => {
    expect(localMoment('Europe/Berlin', '2026-12-24', 19 * 60 + 30)).toBe('2026-12-24T19:30:00+01:00');
    expect(localMoment('Europe/Berlin', '2026-07-01', 3 * 60)).toBe('2026-07-01T03:00:00+02:00');
    expect(localMoment('America/New_York', '2026-01-05', 9 * 60)).toBe('2026-01-05T09:00:00-05:00');
  });

  it('moves a time in the spring-forward gap to the instant the clock jumps to', () => {
    expect(localMoment('Europe/Berlin', '2026-03-29', 2 * 60 + 30)).toBe('2026-03-29T03:00:00+02:00');
  });
});

describe('suggestedMoments', () => {
  it('finds the weekday, weekend, holiday, year-end and night moments from tomorrow on', () => {
    const moments = suggestedMoments({ schedule, bundesland: 'BY' }, new Date('2026-12-30T12:00:00Z'));
    const at = Object.fromEntries(moments.map((m) => [m.name, m.at]));
    expect(at).toMatchObject({
      'Werktag 09:00: innerhalb der Öffnungszeiten': '2027-01-04T09:00:00+01:00',
      'Samstag 11:00': '2027-01-02T11:00:00+01:00',
      'Sonntag 11:00': '2027-01-03T11:00:00+01:00',
      'Feiertag: Neujahr 11:00': '2027-01-01T11:00:00+01:00',
      'Heiligabend 19:30': '2027-12-24T19:30:00+01:00',
      'Silvester 15:00': '2026-12-31T15:00:00+01:00',
    });
    for (const m of moments) expect(zonedParts('Europe/Berlin', new Date(m.at)).date > '2026-12-30').toBe(true);
  });
});

describe('reason, answered_by and mismatches', () => {
  it('reads the reason in the order inactive, vacation, exception, holiday, outside hours', () => {
    expect(simulate(config(), '2026-11-23T09:00:00Z')).toMatchObject({ reason: 'open', answered_by: { via: 'self' } });
    expect(simulate(config({ is_active: false, vacation_mode: true }), '2026-11-23T09:00:00Z').reason).toBe('inactive');
    expect(simulate(config({ vacation_mode: true }), '2026-12-25T09:00:00Z')).toMatchObject({
      reason: 'vacation',
      answered_by: { agent_id: 'b', via: 'vacation_backup' },
    });
    expect(simulate(config(), '2026-12-25T09:00:00Z').reason).toBe('holiday');
    expect(simulate(config(), '2026-11-23T18:00:00Z')).toMatchObject({
      reason: 'outside_hours',
      answered_by: { agent_id: 'b', via: 'backup' },
    });
  });

  it('lists only the expectations that differ; greeting_contains ignores case', () => {
    const s = simulate(config(), '2026-11-23T09:00:00Z');
    expect(mismatchesOf({ accepting_calls: true, greeting_contains: 'guten TAG' }, s)).toEqual([]);
    expect(mismatchesOf({ reason: 'holiday', transfer_employee_id: null, answered_by_agent_id: 'b' }, s)).toEqual([
      { field: 'reason', expected: 'holiday', actual: 'open' },
      { field: 'answered_by_agent_id', expected: 'b', actual: 'a' },
    ]);
  });
});
