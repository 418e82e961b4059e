import { Router } from 'express';
import { parse, uuidParams } from '../../api/validate.js';
import { sendResource } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import type { TemplateService } from './template.service.js';

const templateParams = uuidParams('templateId');

/** Mounted at /v1/agent-templates. */
export function templateRouter(templates: TemplateService): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    res.json(await templates.list(authOf(req)));
  });

  router.post('/', async (req, res) => {
    sendResource(req, res, await templates.create(authOf(req), req.body), { status: 201 });
  });

  router.delete('/:templateId', async (req, res) => {
    const { templateId } = parse(templateParams, req.params);
    await templates.delete(authOf(req), templateId);
    res.status(204).end();
  });

  return router;
}
