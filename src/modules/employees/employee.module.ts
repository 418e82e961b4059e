import { ToolRepository } from '../tools/tool.repository.js';
import type { SharedDeps, BuiltModule } from '../module.js';
import { registerEmployeePaths } from './employee.openapi.js';
import { EmployeeRepository } from './employee.repository.js';
import { employeeResources, employeeRouter } from './employee.router.js';
import { EmployeeService } from './employee.service.js';

export function buildEmployeeModule(deps: SharedDeps): BuiltModule {
  const { db } = deps;
  const employees = new EmployeeService({
    audited: deps.audited,
    employees: new EmployeeRepository(db),
    // A new phone number flows into the transfer tools linked to the employee.
    tools: new ToolRepository(db),
    access: deps.agentAccess,
    events: deps.events,
    clock: deps.clock,
    versions: deps.versions,
    guard: deps.testCaseGuard,
  });
  return {
    module: {
      mounts: [
        {
          path: '/agents/:agentId/employees',
          router: employeeRouter(employees),
          resources: employeeResources(employees),
        },
      ],
      openapi: registerEmployeePaths,
    },
  };
}
