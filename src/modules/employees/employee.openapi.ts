import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  access,
  AGENT_ROUTE_ERRORS,
  anyAuth,
  errorResponses,
  json,
  jsonBody,
  noContent,
  paginated,
} from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import {
  CreateEmployeeSchema,
  EmployeeSchema,
  ListEmployeesQueryDoc,
  UpdateEmployeeSchema,
} from './employee.schemas.js';

const AgentParams = z.object({ agentId: z.uuid() });
const EmployeeParams = z.object({ agentId: z.uuid(), employeeId: z.uuid() });

export function registerEmployeePaths(registry: OpenAPIRegistry): void {
  const tags = ['Employees'];
  const base = '/v1/agents/{agentId}/employees';
  registry.registerPath({
    method: 'get',
    path: base,
    operationId: 'listEmployees',
    ...access('employees:read', 'agent'),
    tags,
    summary: 'List employees (employees:read), alphabetical by name',
    security: anyAuth,
    request: { params: AgentParams, query: ListEmployeesQueryDoc },
    responses: {
      200: json(paginated(EmployeeSchema), 'A page of employees'),
      ...errorResponses(...AGENT_ROUTE_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: base,
    operationId: 'createEmployee',
    ...access('employees:write', 'agent'),
    tags,
    summary: 'Create an employee (employees:write)',
    security: anyAuth,
    request: { params: AgentParams, body: jsonBody(CreateEmployeeSchema) },
    responses: { 201: json(EmployeeSchema, 'The new employee'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'get',
    path: `${base}/{employeeId}`,
    operationId: 'getEmployee',
    ...access('employees:read', 'agent'),
    tags,
    summary: 'Get one employee (employees:read)',
    security: anyAuth,
    request: { params: EmployeeParams },
    responses: { 200: json(EmployeeSchema, 'The employee'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
  registry.registerPath({
    method: 'patch',
    path: `${base}/{employeeId}`,
    operationId: 'updateEmployee',
    ...access('employees:write', 'agent'),
    tags,
    summary:
      'Update an employee (employees:write); a status change records the employee.forwarding_created webhook event',
    security: anyAuth,
    request: { params: EmployeeParams, body: jsonBody(UpdateEmployeeSchema) },
    responses: { 200: json(EmployeeSchema, 'The updated employee'), ...errorResponses(...AGENT_ROUTE_ERRORS, 409) },
  });
  registry.registerPath({
    method: 'delete',
    path: `${base}/{employeeId}`,
    operationId: 'deleteEmployee',
    ...access('employees:write', 'agent'),
    tags,
    summary: 'Delete an employee (employees:write); 409 while a transfer tool is linked to it',
    security: anyAuth,
    request: { params: EmployeeParams },
    responses: { 204: noContent, ...errorResponses(...AGENT_ROUTE_ERRORS, 409) },
  });
}
