import type { Knex } from 'knex';
import { PreconditionFailedError, PreconditionRequiredError } from '../errors/index.js';
import { entityTag, ifMatchHolds, type TagList, type WriteConditions } from './entity-tag.js';

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
 * Reads, inside the write's transaction, whether the organization asks every write for `If-Match`
 * (`requiresIfMatch` in the organizations repository). Passed in, so that this layer never queries.
 */
export type RequiresIfMatch = (trx: Knex | Knex.Transaction, organizationId: string) => Promise<boolean>;

/** 412 unless `ifMatch` holds for `current` (undefined: the resource does not exist). No I/O. */
export function assertIfMatch(ifMatch: TagList, current: unknown): void {
  const tag = current === undefined ? undefined : entityTag(current);
  if (!ifMatchHolds(ifMatch, tag)) throw new PreconditionFailedError(tag);
}

/**
 * Checks a write's `If-Match` inside the write's own transaction, after the row is locked: the check
 * and the write are one database operation, so of N writes carrying the same tag exactly one
 * passes, whichever instance serves them. Without `If-Match`, 428 when the organization asks for it;
 * its policy is read only then, so a write carrying `If-Match` costs no query.
 */
export async function assertWritePreconditions(
  trx: Knex | Knex.Transaction,
  conditions: WriteConditions,
  requiresIfMatch: RequiresIfMatch,
  target: PreconditionTarget,
): Promise<void> {
  if (conditions.ifMatch !== undefined) return assertIfMatch(conditions.ifMatch, target.current);
  if (target.organizationId !== null && (await requiresIfMatch(trx, target.organizationId))) {
    throw new PreconditionRequiredError();
  }
}
