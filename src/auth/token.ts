import jwt from 'jsonwebtoken';
import { z } from 'zod';
import type { Config } from '../config.js';

export type TokenConfig = Pick<Config, 'JWT_SECRET' | 'JWT_PUBLIC_KEY' | 'JWT_ISSUER' | 'JWT_AUDIENCE'>;

const claimsSchema = z.object({ sub: z.uuid(), exp: z.number() });

export type TokenVerifier = (token: string) => { userId: string } | null;

/**
 * Pinned algorithms; `exp` required; issuer and audience checked when configured. A `crit` header
 * is refused whatever it lists: RFC 7515 (4.1.11) says a recipient that does not understand every
 * listed extension must reject the token, and this verifier understands none.
 */
export function createTokenVerifier(config: TokenConfig): TokenVerifier {
  const publicKey = config.JWT_PUBLIC_KEY;
  const key = publicKey ?? config.JWT_SECRET;
  if (!key) throw new Error('A JWT secret or public key is required');
  const algorithms: jwt.Algorithm[] = publicKey ? ['RS256', 'ES256'] : ['HS256'];
  return (token) => {
    try {
      const { header, payload } = jwt.verify(token, key, {
        algorithms,
        complete: true,
        ...(config.JWT_ISSUER ? { issuer: config.JWT_ISSUER } : {}),
        ...(config.JWT_AUDIENCE ? { audience: config.JWT_AUDIENCE } : {}),
      });
      if (Object.hasOwn(header, 'crit')) return null;
      const claims = claimsSchema.safeParse(payload);
      return claims.success ? { userId: claims.data.sub } : null;
    } catch {
      return null;
    }
  };
}

/** Mints an HS256 dashboard token (ops CLI and tests; the real dashboard has its own issuer). */
export function signDashboardToken(config: TokenConfig, userId: string, expiresInSeconds = 3600 * 12): string {
  if (!config.JWT_SECRET) throw new Error('JWT_SECRET is required to mint tokens');
  return jwt.sign({}, config.JWT_SECRET, {
    algorithm: 'HS256',
    subject: userId,
    expiresIn: expiresInSeconds,
    ...(config.JWT_ISSUER ? { issuer: config.JWT_ISSUER } : {}),
    ...(config.JWT_AUDIENCE ? { audience: config.JWT_AUDIENCE } : {}),
  });
}
