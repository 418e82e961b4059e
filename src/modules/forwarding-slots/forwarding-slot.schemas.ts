import type { ErrorDetail } from '../../errors/index.js';
import { z } from '../../openapi/zod.js';

export const MAX_SLOTS = 100;

const required = (message: string) => (issue: { input: unknown }) => (issue.input === undefined ? 'Required' : message);

const slotnummer = z
  .string({ error: required('Must be a string of two digits') })
  .regex(/^\d{2}$/, 'Must be two digits, e.g. 01')
  .openapi({ example: '01' });
const cases = z
  .string({ error: required('Must be a string') })
  .trim()
  .min(1, 'Must not be empty')
  .max(2000)
  .openapi({ description: 'The cases or topics the slot handles' });
/** Optional text; an empty string is stored as null. */
const text = (description: string) =>
  z
    .string()
    .trim()
    .max(255)
    .nullable()
    .transform((v) => (v === '' ? null : v))
    .openapi({ description });

const optional = {
  slot_belegung: text('Who occupies the slot'),
  prioritaet_1: text('First-priority forwarding target'),
  prioritaet_2: text('Second-priority forwarding target'),
  prioritaet_3: text('Third-priority forwarding target'),
  kunde: text('Free-text customer or segment label'),
};

/** A slot as POST and every PUT row take it; unknown fields (such as a GET's id) are ignored. */
export const SlotRowSchema = z
  .object({
    slotnummer,
    cases,
    slot_belegung: optional.slot_belegung.default(null),
    prioritaet_1: optional.prioritaet_1.default(null),
    prioritaet_2: optional.prioritaet_2.default(null),
    prioritaet_3: optional.prioritaet_3.default(null),
    kunde: optional.kunde.default(null),
  })
  .openapi('ForwardingSlotInput');

export const UpdateSlotSchema = z
  .object({
    slotnummer: slotnummer.optional(),
    cases: cases.optional(),
    slot_belegung: optional.slot_belegung.optional(),
    prioritaet_1: optional.prioritaet_1.optional(),
    prioritaet_2: optional.prioritaet_2.optional(),
    prioritaet_3: optional.prioritaet_3.optional(),
    kunde: optional.kunde.optional(),
  })
  .openapi('UpdateForwardingSlot');

export const ReplaceSlotsSchema = z
  .object({
    slots: z
      .array(SlotRowSchema, { error: required('Must be an array of slots') })
      .max(MAX_SLOTS, `At most ${MAX_SLOTS} slots`),
  })
  .openapi('ReplaceForwardingSlots');

export type SlotInput = z.output<typeof SlotRowSchema>;

/** A slotnummer that repeats in one payload is an error of every row after the first. */
export function duplicateSlotnummern(slots: unknown): ErrorDetail[] {
  if (!Array.isArray(slots)) return [];
  const first = new Map<string, number>();
  const details: ErrorDetail[] = [];
  slots.forEach((row: unknown, index) => {
    const value = typeof row === 'object' && row !== null ? (row as { slotnummer?: unknown }).slotnummer : undefined;
    if (typeof value !== 'string') return;
    const seen = first.get(value);
    if (seen === undefined) first.set(value, index);
    else
      details.push({
        field: `slots[${index}].slotnummer`,
        message: `Duplicate slotnummer ${value} (also in slots[${seen}])`,
      });
  });
  return details;
}

export const ForwardingSlotSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    slotnummer: z.string(),
    cases: z.string(),
    slot_belegung: z.string().nullable(),
    prioritaet_1: z.string().nullable(),
    prioritaet_2: z.string().nullable(),
    prioritaet_3: z.string().nullable(),
    kunde: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('ForwardingSlot');
