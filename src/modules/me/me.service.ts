import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import { UnauthorizedError } from '../../errors/index.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import { parseBody } from '../../api/validate.js';
import { assertWritePreconditions } from '../../api/write-preconditions.js';
import { requiresIfMatch } from '../organizations/organization.repository.js';
import type { MeRepository, MeRow } from './me.repository.js';
import { updateMeSchema } from './me.schemas.js';

export type Me = MeRow & { organizations: { organization_id: string; role: string }[] };

/** The dashboard user's own profile (dashboard token only; the router enforces it). */
export class MeService {
  private readonly updateSchema;

  constructor(
    private readonly audited: AuditedTransactions,
    private readonly users: MeRepository,
    private readonly clock: Clock,
    options: { allowPrivateTargets: boolean },
  ) {
    this.updateSchema = updateMeSchema(options.allowPrivateTargets);
  }

  async get(auth: AuthContext): Promise<Me> {
    return this.withMemberships(await this.users.find(auth.userId));
  }

  /**
   * Sets `name` and/or `webhook_url`; other fields are ignored. `If-Match` is checked against the
   * locked row (no organization's `require_if_match` applies to a user's own profile).
   */
  async update(auth: AuthContext, body: unknown, conditions: WriteConditions): Promise<Me> {
    const input = parseBody(this.updateSchema, body);
    return this.audited.transaction(async (trx) => {
      const users = this.users.with(trx);
      const current = await this.withMemberships(await users.findForUpdate(auth.userId), users);
      await assertWritePreconditions(trx, conditions, requiresIfMatch, { organizationId: null, current });
      return this.withMemberships(await users.update(auth.userId, input, this.clock.now()), users);
    });
  }

  private async withMemberships(user: MeRow | undefined, users = this.users): Promise<Me> {
    // The user was found by authentication a moment ago; gone now means the login no longer holds.
    if (!user) throw new UnauthorizedError('Invalid or expired login token');
    return { ...user, organizations: await users.memberships(user.id) };
  }
}
