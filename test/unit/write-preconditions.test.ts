import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { entityTag, UNCONDITIONAL } from '../../src/api/entity-tag.js';
import { assertIfMatch, assertWritePreconditions, type RequiresIfMatch } from '../../src/api/write-preconditions.js';
import { PreconditionFailedError, PreconditionRequiredError } from '../../src/errors/index.js';

/** The policy as a recorded answer: which organizations were asked about, in order. */
function policy(answer: boolean): RequiresIfMatch & { asked: string[] } {
  const asked: string[] = [];
  const requiresIfMatch: RequiresIfMatch = async (_trx, organizationId) => {
    asked.push(organizationId);
    return answer;
  };
  return Object.assign(requiresIfMatch, { asked });
}

const trx = {} as Knex.Transaction;
const current = { id: 'a', name: 'Empfang' };

describe('write preconditions', () => {
  it('checks If-Match without reading the organization policy', async () => {
    const requires = policy(true);
    await assertWritePreconditions(trx, { ifMatch: [entityTag(current)], dryRun: false }, requires, {
      organizationId: 'org',
      current,
    });
    await expect(
      assertWritePreconditions(trx, { ifMatch: ['"stale"'], dryRun: false }, requires, {
        organizationId: 'org',
        current,
      }),
    ).rejects.toBeInstanceOf(PreconditionFailedError);
    expect(requires.asked).toEqual([]);
  });

  it('asks the policy only for a write without If-Match, and answers 428 when it requires one', async () => {
    await expect(
      assertWritePreconditions(trx, UNCONDITIONAL, policy(true), { organizationId: 'org', current }),
    ).rejects.toBeInstanceOf(PreconditionRequiredError);
    const optional = policy(false);
    await assertWritePreconditions(trx, UNCONDITIONAL, optional, { organizationId: 'org', current });
    expect(optional.asked).toEqual(['org']);
    const profile = policy(true);
    await assertWritePreconditions(trx, UNCONDITIONAL, profile, { organizationId: null, current });
    expect(profile.asked).toEqual([]);
  });

  it('fails If-Match on a resource that does not exist, even with *', () => {
    expect(() => assertIfMatch('*', undefined)).toThrow(PreconditionFailedError);
    expect(() => assertIfMatch('*', current)).not.toThrow();
  });
});
