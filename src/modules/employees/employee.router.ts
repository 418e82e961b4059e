import type { Router } from 'express';
import { agentCollectionRouter } from '../../http/agent-collection-router.js';
import type { EmployeeService } from './employee.service.js';

/** Mounted at /v1/agents/:agentId/employees. */
export function employeeRouter(employees: EmployeeService): Router {
  return agentCollectionRouter(employees, 'employeeId');
}
