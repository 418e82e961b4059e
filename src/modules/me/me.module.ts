import type { ApiModule } from '../../http/api-module.js';
import { registerMePaths } from './me.openapi.js';
import { meRouter } from './me.router.js';
import type { MeService } from './me.service.js';

export const meModule: ApiModule<[MeService]> = {
  mounts: (me) => [{ path: '/me', access: { tokenOnly: 'This endpoint' }, router: meRouter(me) }],
  openapi: registerMePaths,
};
