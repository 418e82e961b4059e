import type { ApiModule } from '../../http/api-module.js';
import { registerApiKeyPaths } from './api-key.openapi.js';
import { apiKeyResources, apiKeyRouter } from './api-key.router.js';
import type { ApiKeyService } from './api-key.service.js';

export const apiKeyModule: ApiModule<[ApiKeyService]> = {
  mounts: (keys) => [
    {
      path: '/api-keys',
      access: { tokenOnly: 'API key management' },
      router: apiKeyRouter(keys),
      resources: apiKeyResources(keys),
      // Creating a key answers with the secret key itself, which must not be kept for replays.
      idempotencyKey: false,
    },
  ],
  openapi: registerApiKeyPaths,
};
