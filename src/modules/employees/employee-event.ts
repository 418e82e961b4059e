import type { Employee } from './employee.repository.js';
import type { EmployeeStatus, UpdateEmployeeInput } from './employee.schemas.js';

export const EMPLOYEE_STATUS_EVENT = 'employee.forwarding_created' as const;

/** The calendar day of `at` in Europe/Berlin, where the employees work. */
export function berlinDate(at: Date): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: 'Europe/Berlin',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(at);
}

/**
 * The body of the employee status webhook (spec, Events). The spec's fields come first; `id`,
 * `status`, `previous_status` and `back_at_work_at` are added so a receiver knows what changed.
 * `substitute`, `responsibilities`, `start_date` and `reasons` come from the request that made the
 * change; without them: null, null, the day of the change, and `[new status]`.
 */
export function employeeStatusPayload(input: {
  employee: Employee;
  previousStatus: EmployeeStatus;
  agentName: string;
  details: Pick<UpdateEmployeeInput, 'substitute' | 'responsibilities' | 'start_date' | 'reasons'>;
  at: Date;
}): Record<string, unknown> {
  const { employee, details } = input;
  return {
    event: EMPLOYEE_STATUS_EVENT,
    employee: {
      name: employee.name,
      phone_number: employee.phone_number,
      email: employee.email,
      id: employee.id,
      status: employee.status,
      previous_status: input.previousStatus,
      back_at_work_at: employee.back_at_work_at,
    },
    agents: [input.agentName],
    substitute: details.substitute ?? null,
    responsibilities: details.responsibilities ?? null,
    start_date: details.start_date ?? berlinDate(input.at),
    reasons: details.reasons && details.reasons.length > 0 ? details.reasons : [employee.status],
  };
}
