import type { SharedDeps, BuiltModule } from '../module.js';
import { registerApiKeyPaths } from './api-key.openapi.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { apiKeyResources, apiKeyRouter } from './api-key.router.js';
import { ApiKeyService } from './api-key.service.js';

export function buildApiKeyModule({ db, audited, clock, cache }: SharedDeps): BuiltModule {
  const keys = new ApiKeyService(audited, new ApiKeyRepository(db), clock, () => cache.sync());
  return {
    module: {
      mounts: [
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
    },
  };
}
