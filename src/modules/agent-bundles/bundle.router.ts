import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { entityTag } from '../../api/entity-tag.js';
import { agentIdParams, parse } from '../../api/validate.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import type { BundleService } from './bundle.service.js';

/** Mounted at /v1/agents: /import, /:agentId/bundle, /:agentId/clone. */
export function bundleRouter(bundles: BundleService): Router {
  const router = Router();
  const route = routesOf(router);

  router.post('/import', async (req, res) => {
    const conditions = writeConditions(req, { dryRunnable: true });
    const { agent, changes, failingTestCases } = await bundles.import(authOf(req), req.body, conditions);
    if (conditions.dryRun) sendResource(req, res, { changes }, { ...conditions, failingTestCases });
    else sendResource(req, res, agent, { status: 201 });
  });

  router.get('/:agentId/bundle', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    const bundle = await bundles.export(authOf(req), agentId);
    if (req.accepts(['application/json', 'application/yaml']) === 'application/yaml') {
      // Imported on the first YAML export, not at start (memory, as extract.ts's libraries).
      const { stringify } = await import('yaml');
      // The tag of the JSON form: If-Match of a PUT compares the same representation either way.
      res
        .set('ETag', entityTag(bundle))
        .type('application/yaml')
        .send(stringify(bundle, { lineWidth: 0 }));
      return;
    }
    sendResource(req, res, bundle);
  });

  route
    .put('/:agentId/bundle', agentIdParams)
    .checkedWrite((auth, { agentId }, req, conditions) => bundles.apply(auth, agentId, req.body, conditions));

  router.post('/:agentId/clone', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const { agent, changes, failingTestCases } = await bundles.clone(authOf(req), agentId, req.body, conditions);
    if (conditions.dryRun) sendResource(req, res, { changes }, { ...conditions, failingTestCases });
    else sendResource(req, res, agent, { status: 201 });
  });

  return router;
}
