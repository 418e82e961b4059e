import type { Clock } from '../../clock.js';
import type { Db } from '../../db/knex.js';
import type { ApiModule } from '../../http/api-module.js';
import type { BundleService } from '../agent-bundles/bundle.service.js';
import { registerTemplatePaths } from './template.openapi.js';
import { TemplateRepository } from './template.repository.js';
import { templateRouter } from './template.router.js';
import { TemplateService } from './template.service.js';

export const templateModule: ApiModule<[TemplateService]> = {
  mounts: (templates) => [{ path: '/agent-templates', router: templateRouter(templates) }],
  openapi: registerTemplatePaths,
};

export function buildTemplateService(deps: { db: Db; clock: Clock; bundles: BundleService }): TemplateService {
  return new TemplateService(deps.db, new TemplateRepository(deps.db), deps.bundles, deps.clock);
}
