import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import { ForbiddenError, NotFoundError } from '../../errors/index.js';
import type { WebhookSecretRepository, WebhookSecretRow } from './webhook-secret.repository.js';
import { generateWebhookSecret } from './webhook-signature.js';

/** After a rotation the previous secret keeps signing for this long, beside the new one. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export type WebhookSecretView = {
  organization_id: string;
  secret: string;
  previous_secret_expires_at: Date | null;
  rotated_at: Date | null;
  created_at: Date;
};

/** Reading and rotating an organization's signing secret: dashboard token, developer_admin there. */
export class WebhookSecretService {
  constructor(
    private readonly secrets: WebhookSecretRepository,
    private readonly clock: Clock,
  ) {}

  /** The secret, created on first read. */
  async get(auth: AuthContext, organizationId: string): Promise<WebhookSecretView> {
    this.assertDeveloperAdmin(auth, organizationId);
    return this.view(await this.secrets.getOrCreate(organizationId, generateWebhookSecret, this.clock.now()));
  }

  /** A new secret signs from now on; the old one signs beside it for 24 hours. */
  async rotate(auth: AuthContext, organizationId: string): Promise<WebhookSecretView> {
    this.assertDeveloperAdmin(auth, organizationId);
    const now = this.clock.now();
    await this.secrets.getOrCreate(organizationId, generateWebhookSecret, now);
    const row = await this.secrets.rotate(
      organizationId,
      generateWebhookSecret(),
      now,
      new Date(now.getTime() + ROTATION_GRACE_MS),
    );
    return this.view(row);
  }

  private assertDeveloperAdmin(auth: AuthContext, organizationId: string): void {
    if (!auth.organizations.has(organizationId)) throw new NotFoundError('Organization');
    if (auth.roles.get(organizationId) !== 'developer_admin') {
      throw new ForbiddenError('The webhook secret requires the developer_admin role');
    }
  }

  private view(row: WebhookSecretRow): WebhookSecretView {
    const graceActive =
      row.previous_secret_expires_at !== null && row.previous_secret_expires_at.getTime() > this.clock.now().getTime();
    return {
      organization_id: row.organization_id,
      secret: row.secret,
      previous_secret_expires_at: graceActive ? row.previous_secret_expires_at : null,
      rotated_at: row.rotated_at,
      created_at: row.created_at,
    };
  }
}
