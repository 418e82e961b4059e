import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { uuidParams } from '../../api/validate.js';
import type { TemplateService } from './template.service.js';

const templateParams = uuidParams('templateId');

/** Mounted at /v1/agent-templates. */
export function templateRouter(templates: TemplateService): Router {
  const router = Router();
  const route = routesOf(router);

  route.get('/').json((auth) => templates.list(auth));

  route.post('/').resource((auth, _, req) => templates.create(auth, req.body), 201);

  route.delete('/:templateId', templateParams).noContent((auth, { templateId }) => templates.delete(auth, templateId));

  return router;
}
