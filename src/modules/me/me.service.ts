import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import { UnauthorizedError } from '../../errors/index.js';
import { parseBody } from '../../http/validate.js';
import type { MeRepository, MeRow } from './me.repository.js';
import { updateMeSchema } from './me.schemas.js';

export type Me = MeRow & { organizations: { organization_id: string; role: string }[] };

/** The dashboard user's own profile (dashboard token only; the router enforces it). */
export class MeService {
  private readonly updateSchema;

  constructor(
    private readonly users: MeRepository,
    private readonly clock: Clock,
    options: { allowPrivateTargets: boolean },
  ) {
    this.updateSchema = updateMeSchema(options.allowPrivateTargets);
  }

  async get(auth: AuthContext): Promise<Me> {
    return this.withMemberships(await this.users.find(auth.userId));
  }

  /** Sets `name` and/or `webhook_url`; other fields are ignored. */
  async update(auth: AuthContext, body: unknown): Promise<Me> {
    const input = parseBody(this.updateSchema, body);
    return this.withMemberships(await this.users.update(auth.userId, input, this.clock.now()));
  }

  private async withMemberships(user: MeRow | undefined): Promise<Me> {
    // The user was found by authentication a moment ago; gone now means the login no longer holds.
    if (!user) throw new UnauthorizedError('Invalid or expired login token');
    return { ...user, organizations: await this.users.memberships(user.id) };
  }
}
