import type { ApiModule } from '../../http/api-module.js';
import { registerBundlePaths } from './bundle.openapi.js';
import { bundleRouter } from './bundle.router.js';
import { BundleRepository } from './bundle.repository.js';
import { BundleService, type BundleServiceDeps } from './bundle.service.js';

export const bundleModule: ApiModule<[BundleService]> = {
  mounts: (bundles) => [{ path: '/agents', router: bundleRouter(bundles) }],
  openapi: registerBundlePaths,
};

/** The module's wiring in one place: the container passes the repositories and services it shares. */
export function buildBundleService(deps: Omit<BundleServiceDeps, 'bundles'>): BundleService {
  return new BundleService({ ...deps, bundles: new BundleRepository(deps.db) });
}
