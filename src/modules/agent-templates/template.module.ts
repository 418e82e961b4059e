import type { BundleService } from '../agent-bundles/bundle.service.js';
import type { BuiltModule, SharedDeps } from '../module.js';
import { registerTemplatePaths } from './template.openapi.js';
import { TemplateRepository } from './template.repository.js';
import { templateRouter } from './template.router.js';
import { TemplateService } from './template.service.js';

/** Exports its service: `POST /v1/agents` with `template_id` creates through it. */
export function buildTemplateModule(
  deps: SharedDeps & { bundles: { service: BundleService } },
): BuiltModule<{ service: TemplateService }> {
  const service = new TemplateService(deps.audited, new TemplateRepository(deps.db), deps.bundles.service, deps.clock);
  return {
    module: { mounts: [{ path: '/agent-templates', router: templateRouter(service) }], openapi: registerTemplatePaths },
    service,
  };
}
