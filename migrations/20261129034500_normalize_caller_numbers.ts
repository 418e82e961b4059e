import type { Knex } from 'knex';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * Calls stored their caller number as the telephony layer wrote it, with only spaces, dashes and
 * brackets removed (`030/1234567`, `0049301234567`, `49301234567`); intake now stores E.164. This
 * brings the stored calls and their stored call.completed webhook bodies to E.164 where the number is
 * valid, so that a lookup or an erasure by one form finds all of them. Numbers that are not valid
 * (`anonymous`, extensions) stay as they are.
 *
 * The rule is written out here instead of imported: a migration must do tomorrow what it did today,
 * whatever becomes of src/phone (the same rule as its normalizeCallerNumber, region DE).
 */
function toE164(written: string): string | null {
  let value = written
    .trim()
    .replace(/\(0\)/g, '')
    .replace(/[\s\-./()[\]]/g, '');
  if (value.startsWith('00')) value = `+${value.slice(2)}`;
  else if (/^[1-9]\d{7,14}$/.test(value)) value = `+${value}`;
  if (!/^\+?[0-9]+$/.test(value) || !(value.startsWith('+') || /^0[1-9]/.test(value))) return null;
  const parsed = parsePhoneNumberFromString(value, 'DE');
  return parsed?.isValid() && /^\+[1-9]\d{1,14}$/.test(parsed.number) ? parsed.number : null;
}

/** Rows read per step, in primary-key order: one pass over the table, whatever its size. */
const BATCH = 5000;

type Numbered = { id: string; phone: string | null };

async function normalizeAll(
  read: (after: string) => Promise<Numbered[]>,
  write: (ids: string[], phones: string[]) => Promise<unknown>,
): Promise<void> {
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows = await read(after);
    const changed = rows.flatMap((r) => {
      const e164 = r.phone === null ? null : toE164(r.phone);
      return e164 !== null && e164 !== r.phone ? [{ id: r.id, e164 }] : [];
    });
    if (changed.length > 0)
      await write(
        changed.map((c) => c.id),
        changed.map((c) => c.e164),
      );
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1]!.id;
  }
}

export async function up(knex: Knex): Promise<void> {
  await normalizeAll(
    (after) =>
      knex('calls')
        .where('id', '>', after)
        .whereNotNull('phone_number')
        .orderBy('id')
        .limit(BATCH)
        .select('id', 'phone_number as phone'),
    (ids, phones) =>
      knex.raw(
        `UPDATE calls c SET phone_number = v.phone FROM unnest(?::uuid[], ?::text[]) AS v(id, phone) WHERE c.id = v.id`,
        [ids, phones],
      ),
  );
  await normalizeAll(
    (after) =>
      knex('events')
        .where('id', '>', after)
        .where({ type: 'call.completed' })
        .orderBy('id')
        .limit(BATCH)
        .select('id', knex.raw(`payload->'call'->>'phone_number' AS phone`)),
    (ids, phones) =>
      knex.raw(
        `UPDATE events e SET payload = jsonb_set(e.payload, '{call,phone_number}', to_jsonb(v.phone))
           FROM unnest(?::uuid[], ?::text[]) AS v(id, phone) WHERE e.id = v.id`,
        [ids, phones],
      ),
  );
}

/** The written forms are not kept: down leaves the numbers in E.164, which every reader accepts. */
export async function down(): Promise<void> {}
