import type { RateLimitInfo } from 'express-rate-limit';
import type { AuthContext } from '../auth/auth-context.js';
import type { RouteTemplate } from './route-match.js';

declare module 'express-serve-static-core' {
  interface Request {
    auth?: AuthContext;
    requestId: string;
    rateLimit: RateLimitInfo;
    /** The OpenAPI path template the request's path belongs to (set on arrival), if any. */
    routeTemplate?: RouteTemplate;
  }
}

export {};
