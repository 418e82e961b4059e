import { Router } from 'express';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse, uuidParams } from '../../api/validate.js';
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
    const conditions = writeConditions(req, { dryRunnable: true });
    const { resource, failingTestCases } = await employees.create(authOf(req), agentId, req.body, conditions);
    sendResource(req, res, resource, { status: 201, dryRun: conditions.dryRun, failingTestCases });
  });

  router.get('/:employeeId', async (req, res) => {
    const { agentId, employeeId } = parse(employeeParams, req.params);
    sendResource(req, res, await employees.get(authOf(req), agentId, employeeId));
  });

  router.patch('/:employeeId', async (req, res) => {
    const { agentId, employeeId } = parse(employeeParams, req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const { resource, failingTestCases } = await employees.update(
      authOf(req),
      agentId,
      employeeId,
      req.body,
      conditions,
    );
    sendResource(req, res, resource, { dryRun: conditions.dryRun, failingTestCases });
  });

  router.delete('/:employeeId', async (req, res) => {
    const { agentId, employeeId } = parse(employeeParams, req.params);
    await employees.delete(authOf(req), agentId, employeeId, writeConditions(req));
    res.status(204).end();
  });

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function employeeResources(employees: EmployeeService): Record<string, ResourceCheck> {
  return {
    '/v1/agents/{agentId}/employees/{employeeId}': resourceCheck(employeeParams, (auth, p) =>
      employees.get(auth, p.agentId, p.employeeId),
    ),
  };
}
