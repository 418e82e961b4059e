import { z } from '../../openapi/zod.js';
import { text } from '../agents/text.js';

export const OrganizationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    auto_delete_done_calls: z.boolean(),
    notdienst_bereiche: z.array(z.string()),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Organization');

/** PATCH body (docs/decisions.md); like other non-agent PATCH endpoints, unknown fields are ignored. */
export const OrganizationPatchSchema = z
  .object({
    auto_delete_done_calls: z.boolean().optional(),
    notdienst_bereiche: z
      .array(text({ min: 1, max: 200, trim: true }))
      .max(100, 'Must have at most 100 items')
      .transform((items) => [...new Set(items)])
      .optional()
      .openapi({ description: 'Emergency-duty areas; trimmed, duplicates removed' }),
  })
  .openapi('OrganizationPatch');
