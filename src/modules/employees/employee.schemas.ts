import { paginationShape } from '../../api/pagination.js';
import { paginationQueryDocShape, queryFlag } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { optionalPhoneNumberField } from '../../phone/phone-number.js';
import { text } from '../../validation/text.js';
import { optionalEmailField } from '../../validation/email.js';

export const EMPLOYEE_STATUSES = [
  'anwesend',
  'urlaub',
  'krank',
  'weiterbildung',
  'notdienst',
  'im_termin',
  'ausser_haus',
] as const;
export type EmployeeStatus = (typeof EMPLOYEE_STATUSES)[number];

const status = z.enum(EMPLOYEE_STATUSES, { message: `Must be one of: ${EMPLOYEE_STATUSES.join(', ')}` });
const date = (description: string) =>
  z.iso.date({ message: 'Must be a date (YYYY-MM-DD)' }).openapi({ description, example: '2026-12-01' });

const fields = {
  name: text({ min: 1, max: 255, trim: true }),
  phone_number: optionalPhoneNumberField,
  email: optionalEmailField,
  status,
  active: z.boolean(),
  get_mail: z.boolean(),
  back_at_work_at: date('Day the employee is back at work').nullable(),
  notdienst_bereich: text({ min: 1, max: 255, trim: true })
    .nullable()
    .openapi({ description: 'Emergency-duty area; kept only while status is notdienst' }),
};

export const CreateEmployeeSchema = z
  .object({
    name: fields.name,
    phone_number: fields.phone_number.default(null),
    email: fields.email.default(null),
    status: fields.status.default('anwesend'),
    active: fields.active.default(true),
    get_mail: fields.get_mail.default(false),
    back_at_work_at: fields.back_at_work_at.default(null),
    notdienst_bereich: fields.notdienst_bereich.default(null),
  })
  .openapi('CreateEmployee');

/** Details of a status change, used only for the `employee.forwarding_created` event; not stored. */
const statusChangeFields = {
  substitute: text({ min: 1, max: 255, trim: true })
    .nullable()
    .optional()
    .openapi({ description: 'Event only: name of the stand-in' }),
  responsibilities: text({ min: 1, max: 2000, trim: true })
    .nullable()
    .optional()
    .openapi({ description: 'Event only: what the stand-in takes over' }),
  start_date: date('Event only: first day of the new status; default: today (Europe/Berlin)').optional(),
  reasons: z
    .array(text({ min: 1, max: 500, trim: true }))
    .max(20)
    .optional()
    .openapi({ description: 'Event only: reasons for the change; default: [new status]' }),
};

/** Unknown fields are ignored, as in every non-agent body (docs/decisions.md). */
export const UpdateEmployeeSchema = z
  .object({
    name: fields.name.optional(),
    phone_number: fields.phone_number.optional(),
    email: fields.email.optional(),
    status: fields.status.optional(),
    active: fields.active.optional(),
    get_mail: fields.get_mail.optional(),
    back_at_work_at: fields.back_at_work_at.optional(),
    notdienst_bereich: fields.notdienst_bereich.optional(),
    ...statusChangeFields,
  })
  .openapi('UpdateEmployee');

export const ListEmployeesQuery = z.object({
  ...paginationShape,
  status: status.optional(),
  active: z
    .enum(['true', 'false'], { message: 'Must be true or false' })
    .transform((v) => v === 'true')
    .optional(),
});

export const ListEmployeesQueryDoc = z.object({
  ...paginationQueryDocShape,
  status: status.optional().openapi({ description: 'Only employees with this status' }),
  active: queryFlag('Only active (true) or inactive (false) employees'),
});

export const EmployeeSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    name: z.string(),
    phone_number: z.string().nullable(),
    email: z.string().nullable(),
    status,
    active: z.boolean(),
    get_mail: z.boolean(),
    back_at_work_at: z.iso.date().nullable(),
    notdienst_bereich: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Employee');

export type UpdateEmployeeInput = z.output<typeof UpdateEmployeeSchema>;
