import type { Knex } from 'knex';
import type { WriteConditions } from '../../api/entity-tag.js';
import { assertWritePreconditions } from '../../api/write-preconditions.js';
import { NotFoundError } from '../../errors/index.js';
import { requiresIfMatch } from '../organizations/organization.repository.js';

/*
 * The steps every service of an agent's collection (contacts, employees, tools, forwarding slots,
 * test cases) takes around its own rules, after `AgentAccess.resolve` checked the permission and
 * the agent scope: the item or 404, and the item a write acts on with its preconditions.
 */

/** What these steps need of the agent the item belongs to (what `AgentAccess.resolve` returns). */
export type AgentRef = { id: string; organization_id: string };

/** `item`, or a 404 naming it (`found(row, 'Contact')`: "Contact not found"). */
export function found<T>(item: T | null | undefined, noun: string): T {
  if (item === undefined || item === null) throw new NotFoundError(noun);
  return item;
}

/**
 * The item a write acts on, as the write's transaction read it (locked, with `findForUpdate`, or
 * under a lock the service holds): 404 when it is gone, then its `If-Match` (412) and the
 * organization's rule for a write without one (428). `shown` is the item as its ETag was made,
 * when that is not the row itself (a test case's row carries Date objects).
 */
export async function currentForWrite<T>(
  trx: Knex.Transaction,
  agent: AgentRef,
  conditions: WriteConditions,
  noun: string,
  row: T | undefined,
  shown: (item: T) => unknown = (item) => item,
): Promise<T> {
  const current = found(row, noun);
  await assertWritePreconditions(trx, conditions, requiresIfMatch, {
    organizationId: agent.organization_id,
    current: shown(current),
  });
  return current;
}
