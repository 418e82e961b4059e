import { holidayLookup } from './holidays.js';
import { nextScheduleChange, scheduleDecision, type Holiday, type Schedule, type ScheduleReason } from './schedule.js';
import type { ScheduleException } from './schedule-exceptions.js';
import { vacationStatus, type VacationFields, type VacationStatus } from './vacation.js';
import { zonedParts } from './zoned-time.js';

/** The zone of an agent without a schedule (holidays are still reported for its day). */
export const DEFAULT_TIME_ZONE = 'Europe/Berlin';

export type StatusAgent = {
  id: string;
  name: string;
  is_active: boolean;
  schedule: Schedule | null;
  bundesland: string;
} & VacationFields;

export type AgentStatus = {
  id: string;
  name: string;
  is_active: boolean;
  schedule: Schedule | null;
  timezone: string;
  is_within_schedule: boolean;
  /** Which layer decided `is_within_schedule`: a dated exception, a public holiday, or the weekly rules. */
  reason: ScheduleReason;
  /** The exception that applies now, when `reason` is `exception`. */
  exception: ScheduleException | null;
  is_holiday: boolean;
  holiday: Holiday | null;
  accepting_calls: boolean;
  routed_agent_id: string | null;
  next_change_at: string | null;
} & VacationStatus;

/**
 * Availability at `now`: `schedule: null` is always open; a public holiday of the agent's state on
 * the local date closes the day. Calls go to the agent when it is active and within its schedule,
 * otherwise to its backup when that backup exists and is active, otherwise nowhere.
 */
export function agentStatus(
  agent: StatusAgent,
  backup: { id: string; is_active: boolean } | null,
  now: Date,
): AgentStatus {
  const timezone = agent.schedule?.timezone ?? DEFAULT_TIME_ZONE;
  const holidayOn = holidayLookup(agent.bundesland);
  const holiday = holidayOn(zonedParts(timezone, now).date);
  const decision = agent.schedule
    ? scheduleDecision(agent.schedule, holidayOn, now)
    : { open: true, reason: 'schedule' as const, exception: null };
  const within = decision.open;
  const scheduled = agent.is_active && within;
  const vacation = vacationStatus(agent, scheduled, now);
  // On vacation the agent takes no regular calls: they go to the backup.
  const accepting = scheduled && !vacation.on_vacation;
  const next = agent.schedule ? nextScheduleChange(agent.schedule, holidayOn, now) : null;
  return {
    id: agent.id,
    name: agent.name,
    is_active: agent.is_active,
    schedule: agent.schedule,
    timezone,
    is_within_schedule: within,
    reason: decision.reason,
    exception: decision.exception,
    is_holiday: holiday !== null,
    holiday,
    accepting_calls: accepting,
    routed_agent_id: accepting ? agent.id : backup?.is_active ? backup.id : null,
    next_change_at: next ? next.toISOString() : null,
    ...vacation,
  };
}
