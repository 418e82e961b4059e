import { agentStatus, type AgentStatus, type StatusAgent } from './agent-status.js';
import { chooseGreeting, type GreetingChoice, type GreetingContact, type GreetingVariant } from './greeting.js';

/**
 * Everything that decides what happens to a call: the agent's configuration (stored, a stored
 * version, or with unsaved changes applied), its backup, and the people and tools a call can reach.
 * GET /status, the greeting preview and the call simulation all decide through `decideCall`.
 */
export type CallConfiguration = {
  agent: StatusAgent & { greeting: string | null; greeting_variants: GreetingVariant[] | null };
  backup: { id: string; is_active: boolean } | null;
  employees: readonly TransferEmployee[];
  slots: readonly TransferSlot[];
  tools: readonly CallTool[];
};

export type TransferEmployee = {
  id: string;
  name: string;
  phone_number: string | null;
  status: string;
  active: boolean;
};
export type TransferSlot = {
  slotnummer: string;
  prioritaet_1: string | null;
  prioritaet_2: string | null;
  prioritaet_3: string | null;
};
export type CallTool = { name: string; tool_type: string; is_enabled: boolean; employee_id: string | null };

export type Caller = {
  contact: (GreetingContact & { id: string }) | null;
  callsToday: number;
  /** Pre-call variables for placeholders. */
  variables: Record<string, string>;
};

export const NO_CALLER: Caller = { contact: null, callsToday: 0, variables: {} };

export type TransferTarget = {
  /** The forwarding slot (`slotnummer`); null for a transfer tool linked to an employee. */
  slot_number: string | null;
  employee_id: string | null;
  name: string;
  status: string | null;
  available: boolean;
};

export type CallDecision = {
  status: AgentStatus;
  greeting: GreetingChoice;
  transfer_targets: TransferTarget[];
  /** Names of the enabled tools. */
  tools: string[];
};

/** Employee statuses in which a forwarded call reaches the employee. */
const REACHABLE_STATUSES = new Set(['anwesend', 'notdienst']);

/**
 * A slot's priority fields are free text: an employee's id, name or phone number names that
 * employee; anything else (say, an outside number) is a target of its own, always available.
 */
function slotTargets(slot: TransferSlot, employees: readonly TransferEmployee[]): TransferTarget[] {
  const targets: TransferTarget[] = [];
  for (const value of [slot.prioritaet_1, slot.prioritaet_2, slot.prioritaet_3]) {
    if (value === null || value.trim() === '') continue;
    const wanted = value.trim().toLowerCase();
    const employee = employees.find(
      (e) => e.id === wanted || e.name.trim().toLowerCase() === wanted || e.phone_number === value.trim(),
    );
    targets.push(employee ? employeeTarget(slot.slotnummer, employee) : targetOf(slot.slotnummer, value.trim()));
  }
  return targets;
}

function employeeTarget(slotNumber: string | null, e: TransferEmployee): TransferTarget {
  const available = e.active && REACHABLE_STATUSES.has(e.status);
  return { slot_number: slotNumber, employee_id: e.id, name: e.name, status: e.status, available };
}

function targetOf(slotNumber: string, name: string): TransferTarget {
  return { slot_number: slotNumber, employee_id: null, name, status: null, available: true };
}

/** Forwarding slots in order (priorities 1 to 3), then the enabled transfer tools linked to an employee. */
export function transferTargets(config: Pick<CallConfiguration, 'employees' | 'slots' | 'tools'>): TransferTarget[] {
  const targets = config.slots.flatMap((slot) => slotTargets(slot, config.employees));
  for (const tool of config.tools) {
    if (!tool.is_enabled || tool.employee_id === null) continue;
    const employee = config.employees.find((e) => e.id === tool.employee_id);
    if (employee) targets.push(employeeTarget(null, employee));
  }
  return targets;
}

/** What happens to a call at `at`: availability and routing, the greeting, who it can be transferred to. */
export function decideCall(config: CallConfiguration, at: Date, caller: Caller): CallDecision {
  return {
    status: agentStatus(config.agent, config.backup, at),
    greeting: chooseGreeting(config.agent.greeting, config.agent.greeting_variants, { ...caller, at }),
    transfer_targets: transferTargets(config),
    tools: config.tools.filter((t) => t.is_enabled).map((t) => t.name),
  };
}
