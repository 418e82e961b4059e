import type { ApiModule } from '../../http/api-module.js';
import { registerEmployeePaths } from './employee.openapi.js';
import { employeeResources, employeeRouter } from './employee.router.js';
import type { EmployeeService } from './employee.service.js';

export const employeeModule: ApiModule<[EmployeeService]> = {
  mounts: (employees) => [
    { path: '/agents/:agentId/employees', router: employeeRouter(employees), resources: employeeResources(employees) },
  ],
  openapi: registerEmployeePaths,
};
