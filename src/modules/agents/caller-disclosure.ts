import { hasPermission, type AuthContext } from '../../auth/auth-context.js';

/**
 * What an answer about a call may show of the caller beyond the agent's configuration: the caller's
 * contact (contacts:read) and how often they called today (calls:read), in the agent's
 * organization. agents:read alone shows neither, so a simulation or a greeting preview is no way
 * around the contacts and calls lists.
 */
export type CallerDisclosure = { contact: boolean; callsToday: boolean };

export const FULL_DISCLOSURE: CallerDisclosure = { contact: true, callsToday: true };

/** For an answer that may reach a writer who holds neither (the guard's 409). */
export const NO_DISCLOSURE: CallerDisclosure = { contact: false, callsToday: false };

export function callerDisclosure(auth: AuthContext, organizationId: string): CallerDisclosure {
  return {
    contact: hasPermission(auth, 'contacts:read', organizationId),
    callsToday: hasPermission(auth, 'calls:read', organizationId),
  };
}
