import { paginationShape } from '../../http/pagination.js';
import { paginationQueryDocShape } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { optionalPhoneNumberField, phoneNumberField } from '../../phone/phone-number.js';
import { cleanTags } from './contact-rules.js';

/** Optional text: trimmed; an empty string is stored as null. */
const text = (max: number) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? null : v), z.string().trim().max(max).nullable());

const fields = {
  customer_name: text(255).openapi({
    description: 'Full name; composed from first_name/last_name, or split into them where unambiguous',
  }),
  salutation: text(50).openapi({ example: 'Frau' }),
  first_name: text(255),
  last_name: text(255),
  phone_number: optionalPhoneNumberField.openapi({
    description: 'Main number, unique per agent (409); E.164 after normalisation',
  }),
  mobile_number: optionalPhoneNumberField,
  landline_number: optionalPhoneNumberField,
  email: z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? null : v),
    z
      .string()
      .trim()
      .max(255)
      .pipe(z.email({ message: 'Must be an email address' }))
      .nullable(),
  ),
  address: text(500),
  company: text(255),
  tags: z
    .array(z.string().max(50, 'At most 50 characters'))
    .max(50, 'At most 50 tags')
    .transform(cleanTags)
    .openapi({ description: 'Trimmed, empty ones dropped, de-duplicated case-insensitively', example: ['VIP'] }),
  note: text(5000),
  customer_number: text(100),
  last_contact_date: z.iso.date({ message: 'Must be a date (YYYY-MM-DD)' }).nullable(),
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
  tag: z.string().trim().min(1).max(50).optional(),
  search: z.string().trim().min(1).max(100).optional(),
});

export const ListContactsQueryDoc = z.object({
  ...paginationQueryDocShape,
  phone_number: z
    .string()
    .optional()
    .openapi({ description: 'Matches phone_number, mobile_number or landline_number (normalised like the fields)' }),
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
    customer_number: z.string().nullable(),
    last_contact_date: z.iso.date().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Contact');
