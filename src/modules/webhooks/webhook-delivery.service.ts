import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { NotFoundError } from '../../errors/index.js';
import type { Page } from '../../api/pagination.js';
import { parse } from '../../api/validate.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { ReadRouting } from '../../db/replicas.js';
import type { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import { listDeliveriesQuery, toDelivery, type WebhookDelivery } from './webhook-delivery.schemas.js';
import type { WebhookDispatcher } from './webhook-dispatcher.js';

/** The delivery log of an agent and redelivery. */
export class WebhookDeliveryService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly access: AgentAccess,
    private readonly dispatcher: WebhookDispatcher,
    private readonly clock: Clock,
    /** The delivery log reads from a healthy replica (the caller's own writes: the primary). */
    private readonly reads?: ReadRouting,
  ) {}

  /** Deliveries of the agent's events (post-call and employee events), newest first. */
  async list(auth: AuthContext, agentId: string, query: unknown): Promise<Page<WebhookDelivery>> {
    const agent = await this.access.resolve(auth, agentId, 'agents:read');
    const { status, ...page } = parse(listDeliveriesQuery, query, 'Invalid query parameters');
    const list = (deliveries: WebhookDeliveryRepository) =>
      deliveries.list(agent.organization_id, agent.id, { status }, page);
    const result = this.reads
      ? await this.reads.read(auth, (db) => list(this.deliveries.with(db)))
      : await list(this.deliveries);
    return { ...result, data: result.data.map(toDelivery) };
  }

  /**
   * Queues a new attempt of the delivery to the same target with the same `webhook-id`; the attempt
   * runs in the background (202), so a slow receiver never holds the request.
   */
  async redeliver(auth: AuthContext, agentId: string, deliveryId: string): Promise<WebhookDelivery> {
    const agent = await this.access.resolve(auth, agentId, 'agents:write');
    const delivery = await this.deliveries.find(agent.organization_id, agent.id, deliveryId);
    if (!delivery) throw new NotFoundError('Webhook delivery');
    const at = this.clock.now();
    await this.audited.transaction(async (trx) => {
      await this.deliveries.with(trx).markPending(agent.organization_id, delivery.id, at);
      await this.dispatcher.enqueueSend(trx, { deliveryId: delivery.id, trigger: 'redelivery' });
    });
    return toDelivery({ ...delivery, status: 'pending', updated_at: at });
  }
}
