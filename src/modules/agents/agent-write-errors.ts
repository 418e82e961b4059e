import { isForeignKeyViolation, isUniqueViolation } from '../../db/pg-errors.js';
import { ConflictError, ValidationError } from '../../errors/index.js';

/*
 * The agent repository lets PostgreSQL's errors through; these turn the ones a race can cause
 * (the pre-checks passed, then another request changed the data) into the API's answers.
 */

/** Creating an agent: its phone number was taken meanwhile (409). */
export function agentCreateError(error: unknown): unknown {
  if (!isUniqueViolation(error)) return error;
  return new ConflictError('An agent with this phone number already exists', [
    { field: 'phone_number', message: 'Already used by another agent' },
  ]);
}

/** Updating an agent: its backup agent was deleted between the check and the write (400). */
export function agentUpdateError(error: unknown): unknown {
  if (!isForeignKeyViolation(error)) return error;
  return new ValidationError('Request body is invalid', [
    { field: 'backup_agent_id', message: 'Must be another agent of the same organization' },
  ]);
}

/** Deleting an agent: a row still references it (409). */
export function agentDeleteError(error: unknown): unknown {
  if (!isForeignKeyViolation(error)) return error;
  return new ConflictError('The agent is still referenced and cannot be deleted');
}
