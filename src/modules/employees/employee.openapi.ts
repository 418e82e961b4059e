import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { agentOperations, resourceOperations } from '../../openapi/operations.js';
import {
  CreateEmployeeSchema,
  EmployeeSchema,
  ListEmployeesQueryDoc,
  UpdateEmployeeSchema,
} from './employee.schemas.js';

export function registerEmployeePaths(registry: OpenAPIRegistry): void {
  const employees = resourceOperations(agentOperations(registry, 'Employees'), {
    path: '/v1/agents/{agentId}/employees',
    permission: 'employees',
    operation: 'Employee',
    schema: EmployeeSchema,
  });
  employees.list({ summary: 'List employees (employees:read), alphabetical by name', query: ListEmployeesQueryDoc });
  employees.create({ summary: 'Create an employee (employees:write)', body: CreateEmployeeSchema });
  employees.get({ summary: 'Get one employee (employees:read)' });
  employees.update({
    summary:
      'Update an employee (employees:write); a status change records the employee.forwarding_created webhook event',
    body: UpdateEmployeeSchema,
    errors: [409],
  });
  employees.delete({
    summary: 'Delete an employee (employees:write); 409 while a transfer tool is linked to it',
    errors: [409],
  });
}
