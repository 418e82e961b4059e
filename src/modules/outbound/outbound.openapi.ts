import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  access,
  AGENT_ROUTE_ERRORS,
  anyAuth,
  errorResponses,
  json,
  jsonBody,
  noContent,
} from '../../openapi/common.js';
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

const AgentParams = z.object({ agentId: z.uuid() });
const JobParams = z.object({ agentId: z.uuid(), outboundCallId: z.uuid() });
const OrgParams = z.object({ orgId: z.uuid() });
const AttemptParams = z.object({ attemptId: z.uuid() });

const CampaignParams = z.object({ agentId: z.uuid(), campaignId: z.uuid() });

function registerCampaignPaths(registry: OpenAPIRegistry): void {
  const tags = ['Outbound campaigns'];
  const base = '/v1/agents/{agentId}/campaigns';
  registry.registerPath({
    method: 'get',
    path: base,
    operationId: 'listCampaigns',
    ...access('outbound:read', 'agent'),
    tags,
    summary: 'List campaigns with their counters (outbound:read), newest first',
    security: anyAuth,
    request: { params: AgentParams, query: ListCampaignsQueryDoc },
    responses: { 200: json(CampaignPageSchema, 'A page of campaigns'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'post',
    path: base,
    operationId: 'createCampaign',
    ...access('outbound:write', 'agent'),
    tags,
    summary:
      'Create a campaign with up to 10,000 recipients (outbound:write); one 400 names every bad row as recipients[i].<field>, and nothing is stored then',
    security: anyAuth,
    request: { params: AgentParams, body: jsonBody(CreateCampaignDoc) },
    responses: { 201: json(CampaignSchema, 'The new campaign'), ...errorResponses(...AGENT_ROUTE_ERRORS, 413) },
  });
  registry.registerPath({
    method: 'get',
    path: `${base}/{campaignId}`,
    operationId: 'getCampaign',
    ...access('outbound:read', 'agent'),
    tags,
    summary: 'Get a campaign with its jobs counted per status; finished_at once every job is final (outbound:read)',
    security: anyAuth,
    request: { params: CampaignParams },
    responses: { 200: json(CampaignSchema, 'The campaign'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'post',
    path: `${base}/{campaignId}/recipients`,
    operationId: 'appendCampaignRecipients',
    ...access('outbound:write', 'agent'),
    tags,
    summary:
      'Append up to 10,000 recipients (outbound:write) as JSON or text/csv (header to_number, external_id, contact_id, consent_basis, consent_obtained_at, consent_source; other columns become variables)',
    security: anyAuth,
    request: {
      params: CampaignParams,
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
    responses: {
      200: json(AppendResultSchema, 'How many were added and skipped, and the campaign'),
      ...errorResponses(...AGENT_ROUTE_ERRORS, 413),
    },
  });
  const actions = {
    pause: 'Pause a campaign: none of its jobs is handed out until it is resumed (outbound:write)',
    resume: 'Resume a paused campaign (outbound:write)',
    cancel: 'Cancel a campaign and every job of it not yet final (outbound:write); idempotent',
  } as const;
  for (const [action, summary] of Object.entries(actions)) {
    registry.registerPath({
      method: 'post',
      path: `${base}/{campaignId}/${action}`,
      operationId: `${action}Campaign`,
      ...access('outbound:write', 'agent'),
      tags,
      summary,
      security: anyAuth,
      request: { params: CampaignParams },
      responses: { 200: json(CampaignSchema, 'The campaign'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
    });
  }
}

export function registerOutboundPaths(registry: OpenAPIRegistry): void {
  registerCampaignPaths(registry);
  const tags = ['Outbound calls'];
  const base = '/v1/agents/{agentId}/outbound-calls';
  registry.registerPath({
    method: 'get',
    path: base,
    operationId: 'listOutboundCalls',
    ...access('outbound:read', 'agent'),
    tags,
    summary: 'List outbound call jobs (outbound:read), newest first, cursor paging',
    security: anyAuth,
    request: { params: AgentParams, query: ListOutboundCallsQueryDoc },
    responses: { 200: json(OutboundCallPageSchema, 'A page of jobs'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'post',
    path: base,
    operationId: 'createOutboundCall',
    ...access('outbound:write', 'agent'),
    tags,
    summary:
      'Create an outbound call job (outbound:write); 200 with the existing job when external_id was sent before, 409 DO_NOT_CALL for a listed number',
    security: anyAuth,
    request: { params: AgentParams, body: jsonBody(CreateOutboundCallSchema) },
    responses: {
      201: json(OutboundCallSchema, 'The new job, with next_attempt_at the first allowed moment'),
      200: json(OutboundCallSchema, 'The job created before with this external_id'),
      ...errorResponses(...AGENT_ROUTE_ERRORS, 409),
    },
  });
  registry.registerPath({
    method: 'post',
    path: `${base}/preview`,
    operationId: 'previewOutboundWindow',
    ...access('outbound:read', 'agent'),
    tags,
    summary:
      'The next 5 allowed periods of a calling window for this agent, with the days skipped and why (outbound:read)',
    security: anyAuth,
    request: { params: AgentParams, body: jsonBody(PreviewSchema) },
    responses: {
      200: json(PreviewResponseSchema, 'The next allowed moments'),
      ...errorResponses(...AGENT_ROUTE_ERRORS),
    },
  });
  registry.registerPath({
    method: 'get',
    path: `${base}/{outboundCallId}`,
    operationId: 'getOutboundCall',
    ...access('outbound:read', 'agent'),
    tags,
    summary: 'Get one outbound call job with its attempts (outbound:read)',
    security: anyAuth,
    request: { params: JobParams },
    responses: { 200: json(OutboundCallSchema, 'The job'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'post',
    path: `${base}/{outboundCallId}/cancel`,
    operationId: 'cancelOutboundCall',
    ...access('outbound:write', 'agent'),
    tags,
    summary: 'Cancel a job not yet final (outbound:write); a final job is answered as it is',
    security: anyAuth,
    request: { params: JobParams },
    responses: { 200: json(OutboundCallSchema, 'The job'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });

  const dnc = '/v1/organization/{orgId}/do-not-call';
  const dncTags = ['Do-not-call list'];
  registry.registerPath({
    method: 'get',
    path: dnc,
    operationId: 'listDoNotCall',
    ...access('outbound:read', 'none'),
    tags: dncTags,
    summary: "The organization's do-not-call list (outbound:read), newest first",
    security: anyAuth,
    request: { params: OrgParams, query: ListDoNotCallQueryDoc },
    responses: { 200: json(DoNotCallPageSchema, 'A page of entries'), ...errorResponses(400, 401, 403, 404, 429) },
  });
  registry.registerPath({
    method: 'post',
    path: dnc,
    operationId: 'addDoNotCall',
    ...access('outbound:write', 'none'),
    tags: dncTags,
    summary:
      'Add a number to the do-not-call list (outbound:write); its jobs not yet handed out become blocked. 200 when it was listed already',
    security: anyAuth,
    request: { params: OrgParams, body: jsonBody(CreateDoNotCallSchema) },
    responses: {
      201: json(DoNotCallEntrySchema, 'The new entry'),
      200: json(DoNotCallEntrySchema, 'The entry as listed before'),
      ...errorResponses(400, 401, 403, 404, 429),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: dnc,
    operationId: 'removeDoNotCall',
    ...access('outbound:write', 'none'),
    tags: dncTags,
    summary: 'Remove a number from the do-not-call list (outbound:write)',
    security: anyAuth,
    request: { params: OrgParams, query: DeleteDoNotCallQueryDoc },
    responses: { 204: noContent, ...errorResponses(400, 401, 403, 404, 429) },
  });

  const dispatchTags = ['Outbound dispatch'];
  registry.registerPath({
    method: 'post',
    path: '/v1/outbound/claim',
    operationId: 'claimOutboundCalls',
    ...access('outbound:dispatch', 'unrestricted'),
    tags: dispatchTags,
    summary:
      'The dialer claims due jobs (outbound:dispatch, a key for every agent): each with an attempt and a lease; a job goes to one dialer at a time',
    security: anyAuth,
    request: { body: jsonBody(ClaimSchema) },
    responses: {
      200: json(ClaimResponseSchema, 'The claimed jobs (possibly none)'),
      ...errorResponses(400, 401, 403, 429),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/outbound/attempts/{attemptId}/result',
    operationId: 'reportOutboundAttempt',
    ...access('outbound:dispatch', 'unrestricted'),
    tags: dispatchTags,
    summary:
      'The result of one attempt (outbound:dispatch): answered completes the job, the others schedule the next attempt or fail it; the same result again is idempotent',
    security: anyAuth,
    request: { params: AttemptParams, body: jsonBody(ResultSchema) },
    responses: {
      200: json(AttemptResultResponseSchema, 'The attempt and its job'),
      ...errorResponses(400, 401, 403, 404, 409, 429),
    },
  });
}
