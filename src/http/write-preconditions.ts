import type { Knex } from 'knex';
import { PreconditionFailedError, PreconditionRequiredError } from '../errors/index.js';
import { entityTag, ifMatchHolds, type WriteConditions } from './entity-tag.js';

export type PreconditionTarget = {
  /** The organization whose `require_if_match` applies (null: a user's own profile, none does). */
  organizationId: string | null;
  /**
   * The resource's current representation, exactly as a GET shows it, read inside `trx` after its
   * row is locked (undefined: it does not exist).
   */
  current: unknown;
};

/**
 * Checks a write's `If-Match` inside the write's own transaction, after the row is locked: the check
 * and the write are one database operation, so of N writes carrying the same tag exactly one
 * passes, whichever instance serves them. Without `If-Match`, 428 when the organization asks for it.
 */
export async function assertWritePreconditions(
  trx: Knex | Knex.Transaction,
  conditions: WriteConditions,
  target: PreconditionTarget,
): Promise<void> {
  if (conditions.ifMatch === undefined) {
    if (target.organizationId === null) return;
    const row: { require_if_match: boolean } | undefined = await trx('organizations')
      .where({ id: target.organizationId })
      .first('require_if_match');
    if (row?.require_if_match) throw new PreconditionRequiredError();
    return;
  }
  const current = target.current === undefined ? undefined : entityTag(target.current);
  if (!ifMatchHolds(conditions.ifMatch, current)) throw new PreconditionFailedError(current);
}
