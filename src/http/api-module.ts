import type { Router } from 'express';
import type { OpenApiRegistration } from '../openapi/document.js';
import type { ResourceCheck } from './strict-query.js';

/**
 * Who may call a mount: nobody needs credentials (`public`), an API key or a dashboard token
 * (`any`), or only a dashboard token; `tokenOnly` names what is refused in the 401 message
 * ("API key management requires a dashboard login token").
 */
export type MountAccess = 'public' | 'any' | { tokenOnly: string };

/** One router at one path under /v1. */
export type Mount = {
  /** Agent sub-resources mount at `/agents/:agentId/<sub>` with a `mergeParams` router. */
  path: string;
  access?: MountAccess;
  router: Router;
  /** `false`: POST/PUT/PATCH here take no Idempotency-Key (a response carries a secret never stored). */
  idempotencyKey?: false;
  /**
   * The read of each resource below the mount's agent or organization, keyed by its path template
   * (`/v1/agents/{agentId}/calls/{callId}`): a request with a refused query string for a resource that
   * does not exist gets that read's 404 before the 400 (src/http/strict-query.ts).
   */
  resources?: Readonly<Record<string, ResourceCheck>>;
};

/**
 * A module's mounts as a function of its services, with its OpenAPI registration; `mountModule`
 * binds the services. A module's build function (src/modules/module.ts) may return its
 * `MountedModule` this way or write the object directly.
 */
export type ApiModule<Services extends unknown[]> = {
  mounts: (...services: Services) => Mount[];
  openapi: OpenApiRegistration;
};

/** A module's routes with its services bound, and the OpenAPI registration of exactly those routes. */
export type MountedModule = { mounts: Mount[]; openapi: OpenApiRegistration };

export function mountModule<S extends unknown[]>(module: ApiModule<S>, ...services: S): MountedModule {
  return { mounts: module.mounts(...services), openapi: module.openapi };
}
