import type { RateLimitInfo } from 'express-rate-limit';
import type { AuthContext } from '../auth/auth-context.js';

declare module 'express-serve-static-core' {
  interface Request {
    auth?: AuthContext;
    requestId: string;
    rateLimit: RateLimitInfo;
  }
}

export {};
