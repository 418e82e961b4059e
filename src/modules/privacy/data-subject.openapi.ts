import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody } from '../../openapi/common.js';
import { operationGroup } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import {
  DataSubjectEraseRequestSchema,
  DataSubjectErasureSchema,
  DataSubjectExportRequestSchema,
  DataSubjectExportSchema,
} from './data-subject.schemas.js';

export function registerDataSubjectPaths(registry: OpenAPIRegistry): void {
  const register = operationGroup(registry, {
    tags: ['Privacy'],
    agentScope: 'unrestricted',
    errors: [400, 401, 403, 404, 413, 429],
  });
  const params = z.object({ orgId: z.uuid() });
  register({
    method: 'post',
    path: '/v1/organization/{orgId}/data-subjects/export',
    operationId: 'exportDataSubject',
    permission: 'privacy:write',
    summary:
      'Everything stored about one person (privacy:write; DSGVO Art. 15 and 20): contacts, calls with transcripts, counts of other mentions. Exactly one of phone_number, email, contact_id; an unknown person is 200 with empty lists. Not kept for Idempotency-Key replays. Streamed: the calls are read and written in batches bounded by bytes; after the first bytes an error can only cut the connection, so an answer that is not complete JSON has failed',
    request: { params, body: jsonBody(DataSubjectExportRequestSchema) },
    responses: {
      200: json(DataSubjectExportSchema, 'The export'),
    },
  });
  register({
    method: 'post',
    path: '/v1/organization/{orgId}/data-subjects/erase',
    operationId: 'eraseDataSubject',
    permission: 'privacy:write',
    summary:
      "Erase one person's data (privacy:write; DSGVO Art. 17): contacts deleted; calls found by any stored form of the number or by the person's address or full name in their texts keep only non-personal fields and enum and boolean outcomes; stored webhook bodies redacted alike; stored idempotent answers deleted; saved test cases lose the person's number and greeting; knowledge-base documents that mention the person are listed in kb_documents_to_review, not changed. `dry_run: true` counts and changes nothing. Erasing again answers zero counts",
    request: { params, body: jsonBody(DataSubjectEraseRequestSchema) },
    responses: {
      200: json(DataSubjectErasureSchema, 'The erasure and its counts'),
    },
  });
}
