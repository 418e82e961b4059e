import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Router } from 'express';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../http/validate.js';
import type { CallService } from './call.service.js';
import type { CallStatsService } from './call-stats.service.js';
import type { CallExportService } from './call-export.service.js';

/** `first` (already pulled) and then the rest of the chunks. */
async function* resume(first: IteratorResult<string>, rest: AsyncGenerator<string>): AsyncGenerator<string> {
  if (first.done) return;
  yield first.value;
  yield* rest;
}

const agentParams = uuidParams('agentId');
const callParams = uuidParams('agentId', 'callId');

/** Mounted at /v1/agents/:agentId/calls. */
export function callRouter(calls: CallService, stats: CallStatsService, exporter: CallExportService): Router {
  const router = Router({ mergeParams: true });

  // Before '/:callId', which would take "stats" for an id.
  router.get('/stats', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    res.json(await stats.forAgent(authOf(req), agentId, req.query));
  });

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    res.json(await calls.list(authOf(req), agentId, req.query));
  });

  // Streamed with backpressure; a client that goes away ends the export after the current batch.
  router.get('/export', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    const file = await exporter.open(authOf(req), agentId, req.query);
    // The first batch before the headers: a failure there is still an error answer, not a cut stream.
    const first = await file.chunks.next().catch((error: unknown) => {
      file.close();
      throw error;
    });
    res.status(200).set({
      'Content-Type': file.contentType,
      'Content-Disposition': `attachment; filename="${file.filename}"`,
      'Cache-Control': 'no-store',
    });
    try {
      // One batch waits at most: the next is read only when the socket has taken this one.
      await pipeline(Readable.from(resume(first, file.chunks), { highWaterMark: 1 }), res);
    } catch (error) {
      // After the headers only the connection can tell the client; the log says why.
      if (!res.destroyed) res.destroy(error as Error);
    } finally {
      // The chunks free the slot when they end; this covers a client gone before the first of them.
      file.close();
    }
  });

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    const { created, call } = await calls.intake(authOf(req), agentId, req.body);
    res.status(created ? 201 : 200).json(call);
  });

  router.get('/:callId', async (req, res) => {
    const { agentId, callId } = parse(callParams, req.params);
    sendResource(req, res, await calls.get(authOf(req), agentId, callId));
  });

  router.patch('/:callId', async (req, res) => {
    const { agentId, callId } = parse(callParams, req.params);
    sendResource(req, res, await calls.update(authOf(req), agentId, callId, req.body, writeConditions(req)));
  });

  return router;
}

const orgParams = uuidParams('orgId');

/** Mounted at /v1/organization/:orgId/calls. */
export function organizationCallRouter(stats: CallStatsService): Router {
  const router = Router({ mergeParams: true });
  router.get('/stats', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    res.json(await stats.forOrganization(authOf(req), orgId, req.query));
  });
  return router;
}
