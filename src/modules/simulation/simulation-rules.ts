import type { AgentStatus } from '../agents/agent-status.js';
import type { CallDecision } from '../agents/call-decision.js';
import type { Simulation, SimulationReason, TestCaseExpect, TestCaseResult } from './simulation.schemas.js';

/** Why the agent takes the call or not, in the order the layers decide. */
export function reasonOf(status: AgentStatus): SimulationReason {
  if (status.accepting_calls) return 'open';
  if (!status.is_active) return 'inactive';
  if (status.on_vacation) return 'vacation';
  if (status.reason === 'exception') return 'exception';
  if (status.reason === 'holiday') return 'holiday';
  return 'outside_hours';
}

/** Who answers, exactly as /status routes it (`routed_agent_id`). */
export function answeredBy(status: AgentStatus): Simulation['answered_by'] {
  if (status.accepting_calls) return { agent_id: status.routed_agent_id, via: 'self' };
  if (status.routed_agent_id === null) return { agent_id: null, via: 'none' };
  return { agent_id: status.routed_agent_id, via: status.on_vacation ? 'vacation_backup' : 'backup' };
}

export type SimulatedContact = { id: string; first_name: string | null; last_name: string | null } | null;

function contactName(contact: NonNullable<SimulatedContact>): string | null {
  const name = [contact.first_name, contact.last_name].filter((p) => p && p.trim() !== '').join(' ');
  return name === '' ? null : name;
}

/** The answer of POST /simulate, every field read off the one call decision. */
export function toSimulation(agentId: string, at: Date, decision: CallDecision, contact: SimulatedContact): Simulation {
  const { status, greeting } = decision;
  return {
    at: at.toISOString(),
    agent_id: agentId,
    accepting_calls: status.accepting_calls,
    reason: reasonOf(status),
    holiday: status.holiday,
    exception: status.exception,
    answered_by: answeredBy(status),
    greeting: { text: greeting.greeting ?? '', variant_index: greeting.variant_index },
    contact: contact ? { id: contact.id, name: contactName(contact) } : null,
    transfer_targets: decision.transfer_targets,
    tools: decision.tools,
    next_change_at: status.next_change_at,
  };
}

/** The employee a transfer reaches first: the first available target that is an employee. */
export function transferEmployeeOf(simulation: Simulation): string | null {
  return simulation.transfer_targets.find((t) => t.available && t.employee_id !== null)?.employee_id ?? null;
}

/** What a case expected and the simulation gave otherwise; empty when the case passes. */
export function mismatchesOf(expect: TestCaseExpect, simulation: Simulation): TestCaseResult['mismatches'] {
  const actual: Record<keyof TestCaseExpect, unknown> = {
    accepting_calls: simulation.accepting_calls,
    reason: simulation.reason,
    answered_by_agent_id: simulation.answered_by.agent_id,
    greeting_contains: simulation.greeting.text,
    transfer_employee_id: transferEmployeeOf(simulation),
  };
  const mismatches: TestCaseResult['mismatches'] = [];
  for (const field of Object.keys(actual) as (keyof TestCaseExpect)[]) {
    const expected = expect[field];
    if (expected === undefined) continue;
    const ok =
      field === 'greeting_contains'
        ? simulation.greeting.text.toLowerCase().includes(String(expected).toLowerCase())
        : expected === actual[field];
    if (!ok) mismatches.push({ field, expected, actual: actual[field] });
  }
  return mismatches;
}
