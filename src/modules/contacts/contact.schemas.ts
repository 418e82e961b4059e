import { paginationShape } from '../../api/pagination.js';
import { paginationQueryDocShape, queryText } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { optionalPhoneNumberField, phoneNumberField } from '../../phone/phone-number.js';
import { cleanTags } from './contact-rules.js';
import { text } from '../../validation/text.js';
import { optionalEmailField } from '../../validation/email.js';

/** Optional text: trimmed; an empty string is stored as null. */
const optionalText = (max: number) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? null : v), text({ max, trim: true }).nullable());

const fields = {
  customer_name: optionalText(255).openapi({
    description: 'Full name; composed from first_name/last_name, or split into them where unambiguous',
  }),
  salutation: optionalText(50).openapi({ example: 'Frau' }),
  first_name: optionalText(255),
  last_name: optionalText(255),
  phone_number: optionalPhoneNumberField.openapi({
    description: 'Main number, unique per agent (409); E.164 after normalisation',
  }),
  mobile_number: optionalPhoneNumberField,
  landline_number: optionalPhoneNumberField,
  email: optionalEmailField,
  address: optionalText(500),
  company: optionalText(255),
  tags: z
    .array(text({ max: 50 }))
    .max(50, 'At most 50 tags')
    .nullable()
    .transform((tags) => cleanTags(tags ?? []))
    .openapi({
      description: 'Trimmed, empty ones dropped, de-duplicated case-insensitively; null means none',
      example: ['VIP'],
    }),
  note: optionalText(5000),
  // TalkPilot sends a number; a text customer number (e.g. "K-42") stays possible.
  customer_number: z
    .union(
      [
        z
          .number()
          .int('Must be an integer')
          .min(0, 'Must not be negative')
          .max(Number.MAX_SAFE_INTEGER)
          .transform(String),
        text({ max: 100 }),
      ],
      { message: 'Must be a number or a text of at most 100 characters' },
    )
    .nullable()
    .openapi({ description: 'A number (TalkPilot) or a text such as K-42' }),
  last_contact_date: z
    .union([z.iso.datetime({ offset: true }), z.iso.date()], {
      message: 'Must be an ISO 8601 date-time (or a date, meaning its midnight UTC)',
    })
    .transform((v) => new Date(v.length === 10 ? `${v}T00:00:00Z` : v))
    .nullable()
    .openapi({ type: 'string', format: 'date-time', example: '2026-11-20T14:30:00Z' }),
};

export const CreateContactSchema = z
  .object({
    customer_name: fields.customer_name.optional(),
    salutation: fields.salutation.optional(),
    first_name: fields.first_name.optional(),
    last_name: fields.last_name.optional(),
    phone_number: fields.phone_number.optional(),
    mobile_number: fields.mobile_number.optional(),
    landline_number: fields.landline_number.optional(),
    email: fields.email.optional(),
    address: fields.address.optional(),
    company: fields.company.optional(),
    tags: fields.tags.default([]),
    note: fields.note.optional(),
    customer_number: fields.customer_number.optional(),
    last_contact_date: fields.last_contact_date.optional(),
  })
  .openapi('CreateContact');

/** Unknown fields are ignored. */
export const UpdateContactSchema = CreateContactSchema.extend({ tags: fields.tags.optional() }).openapi(
  'UpdateContact',
);

export type ContactInput = z.output<typeof UpdateContactSchema>;

export const ListContactsQuery = z.object({
  ...paginationShape,
  phone_number: phoneNumberField.optional(),
  tag: text({ min: 1, max: 50, trim: true }).optional(),
  search: text({ min: 1, max: 100, trim: true }).optional(),
});

export const ListContactsQueryDoc = z.object({
  ...paginationQueryDocShape,
  phone_number: queryText('Matches phone_number, mobile_number or landline_number (normalised like the fields)'),
  tag: z.string().optional().openapi({ description: 'Contacts carrying this tag, compared case-insensitively' }),
  search: z.string().optional().openapi({
    description: 'Case-insensitive substring of the names, company, email, customer_number or one of the numbers',
  }),
});

export const ContactSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    customer_name: z.string().nullable(),
    salutation: z.string().nullable(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    phone_number: z.string().nullable(),
    mobile_number: z.string().nullable(),
    landline_number: z.string().nullable(),
    email: z.string().nullable(),
    address: z.string().nullable(),
    company: z.string().nullable(),
    tags: z.array(z.string()),
    note: z.string().nullable(),
    customer_number: z
      .union([z.number().int(), z.string()])
      .nullable()
      .openapi({ description: 'A number when it is one (digits without a leading zero), else the text' }),
    last_contact_date: z.iso.datetime().nullable(),
    name_parsed: z.enum(['auto', 'llm', 'manual', 'unclear']).openapi({
      description:
        'Read-only. manual: parts sent; auto: split from customer_name; unclear: not split (the agent does not greet by name)',
    }),
    name_source: z.enum(['ai', 'manual']).openapi({
      description: 'Read-only. manual: maintained by a person (API or dashboard); ai: captured from calls',
    }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Contact');
