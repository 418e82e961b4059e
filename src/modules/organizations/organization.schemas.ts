import { z } from '../../openapi/zod.js';

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
