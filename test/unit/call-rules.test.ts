import { describe, expect, it } from 'vitest';
import {
  containsPattern,
  countPlan,
  intakeOutcome,
  skipPlan,
  callerNumberOf,
  timeRange,
  trashOnDone,
} from '../../src/modules/calls/call.rules.js';

describe('intakeOutcome', () => {
  const settings = (shortCallsAutoEdit: boolean, autoDeleteDoneCalls: boolean) => ({
    shortCallsAutoEdit,
    autoDeleteDoneCalls,
  });

  it('marks calls under 10 seconds done only when short_calls_auto_edit is on', () => {
    expect(intakeOutcome({ duration: 9.99, done: false }, settings(true, false))).toEqual({ done: true, trash: false });
    expect(intakeOutcome({ duration: 10, done: false }, settings(true, false))).toEqual({ done: false, trash: false });
    expect(intakeOutcome({ duration: 2, done: false }, settings(false, false))).toEqual({ done: false, trash: false });
  });

  it('keeps a call reported as done, done', () => {
    expect(intakeOutcome({ duration: 300, done: true }, settings(false, false))).toEqual({ done: true, trash: false });
  });

  it('sends done calls to the trash when the organization auto-deletes them, never open ones', () => {
    expect(intakeOutcome({ duration: 3, done: false }, settings(true, true))).toEqual({ done: true, trash: true });
    expect(intakeOutcome({ duration: 300, done: true }, settings(false, true))).toEqual({ done: true, trash: true });
    expect(intakeOutcome({ duration: 300, done: false }, settings(true, true))).toEqual({ done: false, trash: false });
  });
});

describe('trashOnDone', () => {
  it('trashes only on the change from open to done with auto-delete on', () => {
    expect(trashOnDone(false, true, true)).toBe(true);
    expect(trashOnDone(true, true, true)).toBe(false);
    expect(trashOnDone(false, undefined, true)).toBe(false);
    expect(trashOnDone(false, true, false)).toBe(false);
  });
});

describe('callerNumberOf', () => {
  it('stores every written form of a valid number as E.164', () => {
    for (const written of ['+49 (30) 123-45 67', '030/1234567', '0049 30 1234567', '49301234567', '+49 (0)30 1234567'])
      expect(callerNumberOf(written)).toBe('+49301234567');
  });
  it('keeps what is not a valid number, with spaces, dashes and brackets dropped', () => {
    expect(callerNumberOf('anonymous')).toBe('anonymous');
    expect(callerNumberOf('(12) 34')).toBe('1234');
  });
});

describe('timeRange', () => {
  it('reads date-only bounds as whole UTC days, both inclusive', () => {
    expect(timeRange('2026-03-01', '2026-03-31')).toEqual({
      from: new Date('2026-03-01T00:00:00.000Z'),
      before: new Date('2026-04-01T00:00:00.000Z'),
    });
  });

  it('reads date-time bounds as instants, `to` inclusive', () => {
    expect(timeRange('2026-03-01T10:00:00+02:00', '2026-03-01T12:00:00Z')).toEqual({
      from: new Date('2026-03-01T08:00:00.000Z'),
      before: new Date('2026-03-01T12:00:00.001Z'),
    });
  });

  it('leaves out a bound that is not given', () => {
    expect(timeRange(undefined, undefined)).toEqual({});
  });
});

describe('containsPattern', () => {
  it('escapes the LIKE wildcards and the escape character', () => {
    expect(containsPattern('100%_a\\b')).toBe('%100\\%\\_a\\\\b%');
  });
});

describe('countPlan', () => {
  const d = (s: string) => new Date(s);
  it('counts an open or whole-day range from day counters alone', () => {
    expect(countPlan({})).toEqual({ days: {}, edges: [] });
    expect(countPlan({ from: d('2026-03-01T00:00:00Z'), before: d('2026-04-01T00:00:00Z') })).toEqual({
      days: { from: '2026-03-01', before: '2026-04-01' },
      edges: [],
    });
  });

  it('counts partial days at the edges row by row', () => {
    expect(countPlan({ from: d('2026-03-01T10:00:00Z'), before: d('2026-03-04T06:00:00Z') })).toEqual({
      days: { from: '2026-03-02', before: '2026-03-04' },
      edges: [
        { from: d('2026-03-01T10:00:00Z'), before: d('2026-03-02T00:00:00Z') },
        { from: d('2026-03-04T00:00:00Z'), before: d('2026-03-04T06:00:00Z') },
      ],
    });
    expect(countPlan({ before: d('2026-03-04T06:00:00Z') })).toEqual({
      days: { before: '2026-03-04' },
      edges: [{ from: d('2026-03-04T00:00:00Z'), before: d('2026-03-04T06:00:00Z') }],
    });
  });

  it('counts a range without a whole day in it row by row', () => {
    const range = { from: d('2026-03-01T10:00:00Z'), before: d('2026-03-02T06:00:00Z') };
    expect(countPlan(range)).toEqual({ days: null, edges: [range] });
  });
});

describe('skipPlan', () => {
  const d = (s: string) => new Date(s);
  it('counts an open range by whole days alone', () => {
    expect(skipPlan({})).toEqual({ top: null, upperHours: null, days: {}, lowerHours: null, floor: null });
  });

  it('counts partial hours row by row, whole hours by hour and whole days by day', () => {
    expect(skipPlan({ from: d('2026-03-01T10:20:00Z'), before: d('2026-03-04T06:30:00Z') })).toEqual({
      top: { from: d('2026-03-04T06:00:00Z'), before: d('2026-03-04T06:30:00Z') },
      upperHours: { from: d('2026-03-04T00:00:00Z'), before: d('2026-03-04T06:00:00Z') },
      days: { from: '2026-03-02', before: '2026-03-04' },
      lowerHours: { from: d('2026-03-01T11:00:00Z'), before: d('2026-03-02T00:00:00Z') },
      floor: d('2026-03-01T11:00:00Z'),
    });
    expect(skipPlan({ before: d('2026-03-04T00:00:00.001Z') })).toEqual({
      top: { from: d('2026-03-04T00:00:00Z'), before: d('2026-03-04T00:00:00.001Z') },
      upperHours: null,
      days: { before: '2026-03-04' },
      lowerHours: null,
      floor: null,
    });
  });

  it('counts a range without a whole day by its hours, and one without a whole hour not at all', () => {
    expect(skipPlan({ from: d('2026-03-01T10:20:00Z'), before: d('2026-03-02T06:30:00Z') })).toEqual({
      top: { from: d('2026-03-02T06:00:00Z'), before: d('2026-03-02T06:30:00Z') },
      upperHours: { from: d('2026-03-01T11:00:00Z'), before: d('2026-03-02T06:00:00Z') },
      days: null,
      lowerHours: null,
      floor: d('2026-03-01T11:00:00Z'),
    });
    expect(skipPlan({ from: d('2026-03-01T10:20:00Z'), before: d('2026-03-01T11:10:00Z') })).toBeNull();
  });
});
