import { uuidField } from '../../api/validate.js';
import { z } from '../../openapi/zod.js';
import { phoneNumberField } from '../../phone/phone-number.js';
import { CallSchema } from '../calls/call.schemas.js';
import { ContactSchema } from '../contacts/contact.schemas.js';
import { ConsentRecordSchema, DoNotCallEntrySchema } from '../outbound/outbound.schemas.js';

const IDENTIFIERS = ['phone_number', 'email', 'contact_id'] as const;

const identifierShape = {
  phone_number: phoneNumberField.optional().openapi({
    type: 'string',
    description:
      'The person\'s number in any written form: normalised as region DE, so "030 1234567", "+49 30 1234567" and "+49301234567" are one person',
    example: '+49301234567',
  }),
  email: z
    .string()
    .trim()
    .max(320)
    .pipe(z.email({ message: 'Must be an email address' }))
    .transform((email) => email.toLowerCase())
    .optional()
    .openapi({ type: 'string', description: 'Compared case-insensitively', example: 'anna@example.com' }),
  contact_id: uuidField().optional().openapi({ description: 'A contact of the organization' }),
};

type Identified = Partial<Record<(typeof IDENTIFIERS)[number], string | undefined>>;

/** Exactly one identifier: none or several is one 400 naming each identifier field. */
function exactlyOne(value: Identified, ctx: z.RefinementCtx): void {
  const given = IDENTIFIERS.filter((name) => value[name] !== undefined);
  if (given.length === 1) return;
  const message =
    given.length === 0
      ? 'Exactly one of phone_number, email, contact_id is required'
      : 'Exactly one of phone_number, email, contact_id may be given';
  for (const name of given.length === 0 ? IDENTIFIERS : given) ctx.addIssue({ code: 'custom', path: [name], message });
}

export const DataSubjectExportRequestSchema = z
  .object(identifierShape)
  .superRefine(exactlyOne)
  .openapi('DataSubjectExportRequest', { description: 'Exactly one of phone_number, email, contact_id' });

export const DataSubjectEraseRequestSchema = z
  .object({
    ...identifierShape,
    dry_run: z.boolean().default(false).openapi({ description: 'true: count what would be erased and change nothing' }),
  })
  .superRefine(exactlyOne)
  .openapi('DataSubjectEraseRequest', { description: 'Exactly one of phone_number, email, contact_id' });

export type DataSubjectIdentifier =
  { kind: 'phone_number'; value: string } | { kind: 'email'; value: string } | { kind: 'contact_id'; value: string };

export function identifierOf(input: Identified): DataSubjectIdentifier {
  if (input.phone_number !== undefined) return { kind: 'phone_number', value: input.phone_number };
  if (input.email !== undefined) return { kind: 'email', value: input.email };
  return { kind: 'contact_id', value: input.contact_id! };
}

export const ErasureCountsSchema = z
  .object({
    contacts: z.number().int().openapi({ description: 'Contacts deleted' }),
    calls: z.number().int().openapi({ description: 'Calls whose personal fields were removed' }),
    webhook_deliveries: z
      .number()
      .int()
      .openapi({ description: 'Stored webhook bodies (one per event, whatever its deliveries) redacted' }),
    idempotency_records: z.number().int().openapi({ description: 'Stored idempotent answers deleted' }),
    test_cases: z.number().int().openapi({
      description:
        "Saved test cases that lost the person's number and greeting expectation (deleted when nothing was left to expect or their name named the person)",
    }),
    outbound_calls: z.number().int().openapi({
      description:
        'Outbound call jobs to the person (their numbers or contacts) deleted with their attempts; scheduled ones are never dialled (the do-not-call entry and consent records stay, see kept)',
    }),
  })
  .openapi('ErasureCounts');

export const KbDocumentToReviewSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid().nullable().openapi({ description: 'null: an organization document' }),
    title: z.string(),
  })
  .openapi('KbDocumentToReview');

export const KEPT_RECORD_TYPES = ['do_not_call', 'outbound_consent'] as const;

export const KeptRecordsSchema = z
  .object({
    type: z.enum(KEPT_RECORD_TYPES).openapi({
      description:
        "do_not_call: the number's entry in the do-not-call list; outbound_consent: consent records of outbound calls to the number",
    }),
    count: z.number().int().openapi({ description: 'How many of them the erasure left as they are' }),
    reason: z.string().openapi({ description: 'Why they are kept, and how they go' }),
  })
  .openapi('KeptRecords');

export const DataSubjectErasureSchema = z
  .object({
    erasure_id: z.uuid().nullable().openapi({
      description:
        'Names the erasure in the audit log and the data_subject.erased webhook; an interrupted erasure resumes under the same id. A dry run shows the id of a running erasure of the person, else null',
    }),
    dry_run: z.boolean(),
    erased: ErasureCountsSchema.openapi({ description: 'Counts; a dry run: what would be erased' }),
    kb_documents_to_review: z.array(KbDocumentToReviewSchema).openapi({
      description:
        "Knowledge-base documents whose title or text mentions one of the person's numbers, addresses or full names, oldest first, at most 100. Erasure does not change them: review and edit or delete them by hand",
    }),
    kept: z.array(KeptRecordsSchema).openapi({
      description:
        "Records of the person's numbers that erasure keeps on purpose (only types with any): the do-not-call entry is their objection to calls, which must hold after the erasure too; consent records are proof the law requires for five years",
    }),
  })
  .openapi('DataSubjectErasure');

export const DataSubjectExportSchema = z
  .object({
    identifier: z.object({ kind: z.enum(IDENTIFIERS), value: z.string() }).openapi({
      description: 'As matched: a phone number in E.164, an email in lower case, or a contact id',
    }),
    contacts: z.array(ContactSchema),
    calls: z.array(CallSchema).openapi({ description: 'All fields, transcripts included; oldest first' }),
    do_not_call: z
      .array(DoNotCallEntrySchema)
      .openapi({ description: "The person's numbers on the organization's do-not-call list" }),
    outbound_consents: z.array(ConsentRecordSchema).openapi({
      description: "Consent records of outbound calls to the person's numbers, oldest first",
    }),
    mentions: z
      .object({
        webhook_deliveries: z.number().int().openapi({ description: 'Stored webhook bodies that contain the person' }),
        idempotency_records: z
          .number()
          .int()
          .openapi({ description: 'Stored idempotent answers (kept 24 hours) that contain the person' }),
      })
      .openapi({ description: 'Counts of other records that mention the person' }),
    exported_at: z.iso.datetime(),
  })
  .openapi('DataSubjectExport');
