import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { uuidParams } from '../../api/validate.js';
import type { PhoneNumberService } from './phone-number.service.js';

const numberParams = uuidParams('numberId');

/** Mounted at /v1/phone-numbers. */
export function phoneNumberRouter(numbers: PhoneNumberService): Router {
  const router = Router();
  const route = routesOf(router);

  route.get('/').json((auth, _, req) => numbers.list(auth, req.query));
  route.post('/').json((auth, _, req) => numbers.create(auth, req.body), 201);
  route.get('/:numberId', numberParams).json((auth, { numberId }) => numbers.get(auth, numberId));
  route.patch('/:numberId', numberParams).json((auth, { numberId }, req) => numbers.update(auth, numberId, req.body));
  route.delete('/:numberId', numberParams).noContent((auth, { numberId }) => numbers.delete(auth, numberId));
  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function phoneNumberResources(numbers: PhoneNumberService): Record<string, ResourceCheck> {
  return {
    '/v1/phone-numbers/{numberId}': resourceCheck(numberParams, (auth, p) => numbers.get(auth, p.numberId)),
  };
}
