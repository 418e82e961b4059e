import { describe, expect, it } from 'vitest';
import { toCall, toCallListItem, type CallRow } from '../../src/modules/calls/call.repository.js';

const row: CallRow = {
  id: '6c3f0a52-51b4-4c1e-9a57-0d7f2f3c6a11',
  organization_id: 'a5f1c2d3-0000-4000-8000-000000000001',
  agent_id: 'a5f1c2d3-0000-4000-8000-000000000002',
  call_id: 'call-1',
  customer_name: 'Erika Mustermann',
  customer_request: 'Rückruf',
  phone_number: '+4930123456',
  duration: 42,
  done: true,
  general_success: false,
  disconnection_reason: 'user_hangup',
  call_summary: 'Bittet um Rückruf.',
  transcript: [{ role: 'user', text: 'Hallo' }],
  audio_file_url: 'https://example.com/a.mp3',
  final_score: 7,
  employee_id: 'a5f1c2d3-0000-4000-8000-000000000003',
  employee_name: 'Max',
  note: 'später',
  extracted_data: { urgency: 'routine', units: 2 },
  direction: 'outbound',
  outbound_call_id: 'a5f1c2d3-0000-4000-8000-000000000004',
  experiment_id: 'a5f1c2d3-0000-4000-8000-000000000005',
  variant: 'B',
  is_purged: false,
  purged_at: null,
  deleted_at: new Date('2026-05-04T10:00:00Z'),
  created_at: new Date('2026-05-03T08:00:00Z'),
  updated_at: new Date('2026-05-03T09:00:00Z'),
};

describe('a list item is the call record without transcript, recording and score', () => {
  it.each([
    ['with an employee', row],
    ['without one', { ...row, employee_id: null, employee_name: null }],
    ['with the employee deleted since', { ...row, employee_name: null }],
  ])('%s: same values, same field order', (_, r) => {
    const { transcript, audio_file_url, final_score, ...rest } = toCall(r);
    expect([transcript, audio_file_url, final_score]).toEqual([
      '[{"role":"user","text":"Hallo"}]',
      r.audio_file_url,
      7,
    ]);
    const item = toCallListItem(r);
    expect(item).toEqual(rest);
    expect(Object.keys(item)).toEqual(Object.keys(rest));
  });
});
