import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody, noContent } from '../../openapi/common.js';
import { agentOperations, operationGroup, resourceOperations } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import {
  AppendRecipientsDoc,
  AppendResultSchema,
  CampaignPageSchema,
  CampaignSchema,
  CreateCampaignDoc,
  ListCampaignsQueryDoc,
  AttemptResultResponseSchema,
  ClaimResponseSchema,
  ClaimSchema,
  CreateDoNotCallSchema,
  CreateOutboundCallSchema,
  DeleteDoNotCallQueryDoc,
  DoNotCallEntrySchema,
  DoNotCallPageSchema,
  ListDoNotCallQueryDoc,
  ListOutboundCallsQueryDoc,
  OutboundCallPageSchema,
  OutboundCallSchema,
  PreviewResponseSchema,
  PreviewSchema,
  ResultSchema,
} from './outbound.schemas.js';

function registerCampaignPaths(registry: OpenAPIRegistry): void {
  const register = agentOperations(registry, 'Outbound campaigns');
  const campaigns = resourceOperations(register, {
    path: '/v1/agents/{agentId}/campaigns',
    permission: 'outbound',
    operation: 'Campaign',
    schema: CampaignSchema,
  });
  campaigns.list({
    summary: 'List campaigns with their counters (outbound:read), newest first',
    query: ListCampaignsQueryDoc,
    page: CampaignPageSchema,
  });
  campaigns.create({
    summary:
      'Create a campaign with up to 10,000 recipients (outbound:write); one 400 names every bad row as recipients[i].<field>, and nothing is stored then',
    body: CreateCampaignDoc,
    errors: [413],
  });
  campaigns.get({
    summary: 'Get a campaign with its jobs counted per status; finished_at once every job is final (outbound:read)',
  });
  register({
    method: 'post',
    path: '/v1/agents/{agentId}/campaigns/{campaignId}/recipients',
    operationId: 'appendCampaignRecipients',
    permission: 'outbound:write',
    summary:
      'Append up to 10,000 recipients (outbound:write) as JSON or text/csv (header to_number, external_id, contact_id, consent_basis, consent_obtained_at, consent_source; other columns become variables)',
    request: {
      params: z.object({ agentId: z.uuid(), campaignId: z.uuid() }),
      body: {
        required: true,
        content: {
          'application/json': { schema: AppendRecipientsDoc },
          'text/csv': {
            schema: z.string().openapi({ example: 'to_number,external_id,name\n030 1234567,crm-1,Erika' }),
          },
        },
      },
    },
    responses: { 200: json(AppendResultSchema, 'How many were added and skipped, and the campaign') },
    errors: [413],
  });
  const actions = {
    pause: 'Pause a campaign: none of its jobs is handed out until it is resumed (outbound:write)',
    resume: 'Resume a paused campaign (outbound:write)',
    cancel: 'Cancel a campaign and every job of it not yet final (outbound:write); idempotent',
  } as const;
  for (const [action, summary] of Object.entries(actions)) {
    campaigns.action(action, { summary, response: 'The campaign' });
  }
}

export function registerOutboundPaths(registry: OpenAPIRegistry): void {
  registerCampaignPaths(registry);
  const register = agentOperations(registry, 'Outbound calls');
  const base = '/v1/agents/{agentId}/outbound-calls';
  const jobs = resourceOperations(register, {
    path: base,
    permission: 'outbound',
    operation: 'OutboundCall',
    noun: 'job',
    param: 'outboundCallId',
    schema: OutboundCallSchema,
  });
  jobs.list({
    summary: 'List outbound call jobs (outbound:read), newest first, cursor paging',
    query: ListOutboundCallsQueryDoc,
    page: OutboundCallPageSchema,
  });
  register({
    method: 'post',
    path: base,
    operationId: 'createOutboundCall',
    permission: 'outbound:write',
    summary:
      'Create an outbound call job (outbound:write); 200 with the existing job when external_id was sent before, 409 DO_NOT_CALL for a listed number',
    request: { body: jsonBody(CreateOutboundCallSchema) },
    responses: {
      201: json(OutboundCallSchema, 'The new job, with next_attempt_at the first allowed moment'),
      200: json(OutboundCallSchema, 'The job created before with this external_id'),
    },
    errors: [409],
  });
  register({
    method: 'post',
    path: `${base}/preview`,
    operationId: 'previewOutboundWindow',
    permission: 'outbound:read',
    summary:
      'The next 5 allowed periods of a calling window for this agent, with the days skipped and why (outbound:read)',
    request: { body: jsonBody(PreviewSchema) },
    responses: {
      200: json(PreviewResponseSchema, 'The next allowed moments'),
    },
  });
  jobs.get({ summary: 'Get one outbound call job with its attempts (outbound:read)' });
  jobs.action('cancel', {
    summary: 'Cancel a job not yet final (outbound:write); a final job is answered as it is',
    response: 'The job',
  });

  const dnc = '/v1/organization/{orgId}/do-not-call';
  const registerDnc = operationGroup(registry, {
    tags: ['Do-not-call list'],
    agentScope: 'none',
    errors: [400, 401, 403, 404, 429],
  });
  registerDnc({
    method: 'get',
    path: dnc,
    operationId: 'listDoNotCall',
    permission: 'outbound:read',
    summary: "The organization's do-not-call list (outbound:read), newest first",
    request: { query: ListDoNotCallQueryDoc },
    responses: { 200: json(DoNotCallPageSchema, 'A page of entries') },
  });
  registerDnc({
    method: 'post',
    path: dnc,
    operationId: 'addDoNotCall',
    permission: 'outbound:write',
    summary:
      'Add a number to the do-not-call list (outbound:write); its jobs not yet handed out become blocked. 200 when it was listed already',
    request: { body: jsonBody(CreateDoNotCallSchema) },
    responses: {
      201: json(DoNotCallEntrySchema, 'The new entry'),
      200: json(DoNotCallEntrySchema, 'The entry as listed before'),
    },
  });
  registerDnc({
    method: 'delete',
    path: dnc,
    operationId: 'removeDoNotCall',
    permission: 'outbound:write',
    summary: 'Remove a number from the do-not-call list (outbound:write)',
    request: { query: DeleteDoNotCallQueryDoc },
    responses: { 204: noContent },
  });

  const registerDispatch = operationGroup(registry, {
    tags: ['Outbound dispatch'],
    agentScope: 'unrestricted',
    errors: [400, 401, 403, 429],
  });
  registerDispatch({
    method: 'post',
    path: '/v1/outbound/claim',
    operationId: 'claimOutboundCalls',
    permission: 'outbound:dispatch',
    summary:
      'The dialer claims due jobs (outbound:dispatch, a key for every agent): each with an attempt and a lease; a job goes to one dialer at a time',
    request: { body: jsonBody(ClaimSchema) },
    responses: {
      200: json(ClaimResponseSchema, 'The claimed jobs (possibly none)'),
    },
  });
  registerDispatch({
    method: 'post',
    path: '/v1/outbound/attempts/{attemptId}/result',
    operationId: 'reportOutboundAttempt',
    permission: 'outbound:dispatch',
    summary:
      'The result of one attempt (outbound:dispatch): answered completes the job, the others schedule the next attempt or fail it; the same result again is idempotent',
    request: { body: jsonBody(ResultSchema) },
    responses: {
      200: json(AttemptResultResponseSchema, 'The attempt and its job'),
    },
    errors: [404, 409],
  });
}
