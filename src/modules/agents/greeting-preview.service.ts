import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import { parseBody } from '../../api/validate.js';
import type { AgentAccess } from './agent-access.js';
import { callerDisclosure } from './caller-disclosure.js';
import type { GreetingContactRepository } from './greeting-contact.repository.js';
import { GreetingPreviewRequestSchema } from './greeting-preview.schemas.js';
import { decideCall, type CallConfiguration } from './call-decision.js';
import { GREETING_TIME_ZONE, type GreetingChoice } from './greeting.js';
import { addDays, instantsAt, zonedParts } from './zoned-time.js';

/** How many calls `phoneNumber` made to the agent in [since, until); container.ts wires it to the calls repository. */
export type CallsTodayCounter = (query: {
  agentId: string;
  organizationId: string;
  phoneNumber: string;
  since: Date;
  until: Date;
}) => Promise<number>;

/** Today in Europe/Berlin (the day greeting variants count calls in) as an instant range. */
export function berlinDay(at: Date): { since: Date; until: Date } {
  const date = zonedParts(GREETING_TIME_ZONE, at).date;
  return {
    since: new Date(instantsAt(GREETING_TIME_ZONE, date, 0)[0]!),
    until: new Date(instantsAt(GREETING_TIME_ZONE, addDays(date, 1), 0)[0]!),
  };
}

function variableStrings(
  variables: Record<string, string | number | boolean | null> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(variables ?? {})) if (v !== null) out[k] = String(v);
  return out;
}

export class GreetingPreviewService {
  constructor(
    private readonly access: AgentAccess,
    private readonly contacts: GreetingContactRepository,
    private readonly countCallsToday: CallsTodayCounter,
    private readonly clock: Clock,
  ) {}

  /** Which greeting the agent would speak to this caller at this time, and why (agents:read). */
  async preview(auth: AuthContext, agentId: string, body: unknown) {
    const agent = await this.access.resolve(auth, agentId, 'agents:read');
    const input = parseBody(GreetingPreviewRequestSchema, body);
    const at = input.at ? new Date(input.at) : this.clock.now();
    const phone = input.caller_phone ?? null;
    // What the caller may not read is not looked up at all: the greeting then cannot show it either.
    const may = callerDisclosure(auth, agent.organization_id);
    const contact =
      phone && may.contact ? await this.contacts.findByPhone(agent.id, agent.organization_id, phone) : undefined;
    const callsToday = input.calls_today ?? (may.callsToday ? await this.counted(agent, phone, at) : null);
    // The same decision a call simulation makes; the greeting needs neither backup nor people.
    const config: CallConfiguration = {
      agent,
      backup: null,
      employees: [],
      slots: [],
      tools: [],
    };
    const caller = {
      contact: contact ?? null,
      callsToday: callsToday ?? 0,
      variables: variableStrings(input.variables),
    };
    const choice: GreetingChoice = decideCall(config, at, caller).greeting;
    return {
      agent_id: agent.id,
      at: at.toISOString(),
      caller_phone: phone,
      contact: contact ?? null,
      calls_today: callsToday,
      calls_today_source: input.calls_today === undefined ? ('calls' as const) : ('request' as const),
      ...choice,
    };
  }

  /** The caller's calls to the agent on the Berlin day of `at` (0 without a number). */
  private async counted(agent: { id: string; organization_id: string }, phone: string | null, at: Date) {
    if (phone === null) return 0;
    return this.countCallsToday({
      agentId: agent.id,
      organizationId: agent.organization_id,
      phoneNumber: phone,
      ...berlinDay(at),
    });
  }
}
