import type { AnalysisField } from '../agents/analysis-fields.js';
import { toCallListItem, type CallListRow, type CallRow } from './call.repository.js';

/** Pure formatting of exported calls: NDJSON lines and RFC 4180 CSV rows. */

export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Exports running at once per API key (or dashboard user); one more is a 429. */
export const EXPORTS_PER_KEY = 2;

/**
 * Text read and written per batch of an export (and of a data subject's): with the batch on its way and the next in the
 * making, a slow reader holds a few times this however large the calls (a call bigger than this,
 * at most the body limit, is a batch of its own).
 */
export const EXPORT_BATCH_BYTES = 256 * 1024;

/** One call per line, the object the list returns. */
export function ndjsonLine(row: CallListRow): string {
  return `${JSON.stringify(toCallListItem(row))}\n`;
}

const BASE_COLUMNS = [
  'id',
  'call_id',
  'agent_id',
  'created_at',
  'updated_at',
  'customer_name',
  'customer_request',
  'phone_number',
  'duration',
  'done',
  'general_success',
  'disconnection_reason',
  'call_summary',
  'employee_id',
  'employee_name',
  'note',
  'is_purged',
  'deleted_at',
  'direction',
  'outbound_call_id',
  'experiment_id',
  'variant',
] as const;

/**
 * A text cell a spreadsheet would read as a formula (OWASP, CSV injection): it starts with one of
 * these. Numbers and booleans are written as they are (a negative number is a number, not a formula).
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * RFC 4180: a field with a comma, quote, CR or LF is quoted, quotes doubled; null is empty. A text
 * that starts like a formula gets a leading `'`, which spreadsheets show as text and do not run.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = value instanceof Date ? value.toISOString() : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * A phone number as text, whatever its form: `'` before it, so that a spreadsheet neither takes
 * `+49...` for a formula nor `0301234567` for a number without its leading zero.
 */
function phoneCell(phone: string | null): string | null {
  return phone === null || phone === '' ? phone : `'${phone}`;
}

function csvRow(values: unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** The CSV columns for an agent's analysis fields at the start of the export; transcript last. */
export function csvHeader(fields: readonly AnalysisField[]): string {
  return csvRow([...BASE_COLUMNS, ...fields.map((f) => `extracted.${f.name}`), 'transcript']);
}

export function csvLine(row: CallRow, fields: readonly AnalysisField[]): string {
  const base = BASE_COLUMNS.map((column) => (column === 'phone_number' ? phoneCell(row.phone_number) : row[column]));
  const extracted = fields.map((f) => row.extracted_data?.[f.name]);
  const transcript = row.transcript === null ? null : JSON.stringify(row.transcript);
  return csvRow([...base, ...extracted, transcript]);
}
