/** Vacation mode (TalkPilot's legacy agent fields), kept apart from the schedule rules. */
export type VacationFields = {
  vacation_mode: boolean;
  vacation_end: Date | string | null;
  vacation_notdienst: boolean;
};

export type VacationStatus = {
  /** Vacation mode is on and its end (if any) has not passed. */
  on_vacation: boolean;
  vacation_mode: boolean;
  vacation_end: string | null;
  vacation_notdienst: boolean;
  /** Emergency (Notdienst) calls reach this agent: always when it takes calls, during vacation only with notdienst. */
  accepting_emergency_calls: boolean;
};

/**
 * Vacation at `now`: on while vacation_mode is set and `now` is before vacation_end (no end: until
 * switched off). The agent then takes no regular calls (its backup does); with vacation_notdienst
 * it still takes emergency calls.
 */
export function vacationStatus(
  agent: VacationFields & { is_active: boolean },
  acceptingCalls: boolean,
  now: Date,
): VacationStatus {
  const end = agent.vacation_end === null ? null : new Date(agent.vacation_end);
  const onVacation = agent.vacation_mode === true && (end === null || now.getTime() < end.getTime());
  return {
    on_vacation: onVacation,
    vacation_mode: agent.vacation_mode === true,
    vacation_end: end ? end.toISOString() : null,
    vacation_notdienst: agent.vacation_notdienst === true,
    accepting_emergency_calls: onVacation ? agent.is_active && agent.vacation_notdienst === true : acceptingCalls,
  };
}
