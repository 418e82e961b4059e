import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse, uuidParams } from '../../http/validate.js';
import type { EmployeeService } from './employee.service.js';

const employeeParams = uuidParams('agentId', 'employeeId');

/** Mounted at /v1/agents/:agentId/employees. */
export function employeeRouter(employees: EmployeeService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await employees.list(authOf(req), agentId, req.query));
  });

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.status(201).json(await employees.create(authOf(req), agentId, req.body));
  });

  router.get('/:employeeId', async (req, res) => {
    const { agentId, employeeId } = parse(employeeParams, req.params);
    res.json(await employees.get(authOf(req), agentId, employeeId));
  });

  router.patch('/:employeeId', async (req, res) => {
    const { agentId, employeeId } = parse(employeeParams, req.params);
    res.json(await employees.update(authOf(req), agentId, employeeId, req.body));
  });

  router.delete('/:employeeId', async (req, res) => {
    const { agentId, employeeId } = parse(employeeParams, req.params);
    await employees.delete(authOf(req), agentId, employeeId);
    res.status(204).end();
  });

  return router;
}
