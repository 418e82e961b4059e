import { reachableOrganizations, type AuthContext } from '../../auth/auth-context.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors/index.js';
import { parseBody } from '../../api/validate.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import type { WebhookDispatcher } from './webhook-dispatcher.js';
import { meWebhookTestBody, type WebhookTestResult } from './webhook-test.schemas.js';

/**
 * Test pings: a signed `webhook.test` event sent at once to a configured URL, answered with the
 * receiver's outcome (within the webhook timeout). Nothing is stored; /metrics counts them.
 */
export class WebhookTestService {
  constructor(
    private readonly access: AgentAccess,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly dispatcher: WebhookDispatcher,
  ) {}

  /** The agent's post_call_webhook_url (agents:write; agent scope checked first). */
  async testAgent(auth: AuthContext, agentId: string): Promise<WebhookTestResult> {
    const agent = await this.access.resolve(auth, agentId, 'agents:write');
    if (!agent.post_call_webhook_url) throw notConfigured('post_call_webhook_url', 'this agent');
    return this.dispatcher.ping({
      organizationId: agent.organization_id,
      agentId: agent.id,
      url: agent.post_call_webhook_url,
    });
  }

  /**
   * The signed-in user's webhook_url (dashboard token). It receives events of every organization the
   * user belongs to; `organization_id` picks whose secret signs the ping (optional with one).
   */
  async testMe(auth: AuthContext, body: unknown): Promise<WebhookTestResult> {
    const { organization_id } = parseBody(meWebhookTestBody, body);
    const organizations = reachableOrganizations(auth);
    if (organization_id !== undefined && !organizations.includes(organization_id))
      throw new NotFoundError('Organization');
    const url = await this.deliveries.userWebhookUrl(auth.userId);
    if (!url) throw notConfigured('webhook_url', 'you (PATCH /v1/me)');
    const organizationId = organization_id ?? (organizations.length === 1 ? organizations[0] : undefined);
    if (organizationId === undefined)
      throw new ValidationError('Request body is invalid', [
        {
          field: 'organization_id',
          message:
            organizations.length === 0
              ? 'You belong to no organization: no secret can sign the ping'
              : 'Required: you belong to several organizations; name the one whose secret signs the ping',
        },
      ]);
    return this.dispatcher.ping({ organizationId, agentId: null, url });
  }
}

/** 409 CONFLICT naming the field to set: there is nothing to test yet. */
function notConfigured(field: string, owner: string): ConflictError {
  return new ConflictError(`No webhook URL is set for ${owner}: set ${field} first`, [{ field, message: 'Not set' }]);
}
