import { Router } from 'express';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { PhoneNumberService } from './phone-number.service.js';

const numberParams = uuidParams('numberId');

/** Mounted at /v1/phone-numbers. */
export function phoneNumberRouter(numbers: PhoneNumberService): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    res.json(await numbers.list(authOf(req), req.query));
  });

  router.post('/', async (req, res) => {
    res.status(201).json(await numbers.create(authOf(req), req.body));
  });

  router.get('/:numberId', async (req, res) => {
    const { numberId } = parse(numberParams, req.params);
    res.json(await numbers.get(authOf(req), numberId));
  });

  router.patch('/:numberId', async (req, res) => {
    const { numberId } = parse(numberParams, req.params);
    res.json(await numbers.update(authOf(req), numberId, req.body));
  });

  router.delete('/:numberId', async (req, res) => {
    const { numberId } = parse(numberParams, req.params);
    await numbers.delete(authOf(req), numberId);
    res.status(204).end();
  });

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function phoneNumberResources(numbers: PhoneNumberService): Record<string, ResourceCheck> {
  return {
    '/v1/phone-numbers/{numberId}': resourceCheck(numberParams, (auth, p) => numbers.get(auth, p.numberId)),
  };
}
