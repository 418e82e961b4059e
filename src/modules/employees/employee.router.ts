import type { Router } from 'express';
import { agentCollectionResources, agentCollectionRouter } from '../../http/agent-collection-router.js';
import type { ResourceCheck } from '../../http/strict-query.js';
import type { EmployeeService } from './employee.service.js';

/** Mounted at /v1/agents/:agentId/employees. */
export function employeeRouter(employees: EmployeeService): Router {
  return agentCollectionRouter(employees, 'employeeId');
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function employeeResources(employees: EmployeeService): Record<string, ResourceCheck> {
  return agentCollectionResources(employees, 'employees', 'employeeId');
}
