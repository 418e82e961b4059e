import type { NewEvent } from '../../events/event-recorder.js';

/** What the events of a document name about it (a claimed document of the pipeline or a web sync). */
export type EventDocument = {
  id: string;
  organization_id: string;
  agent_id: string | null;
  title: string;
  scope: 'agent' | 'organization';
};

/**
 * kb.document.ready or kb.document.failed for a document whose processing or sync ended: the body
 * the receivers get (WebhookKbDocument), plus `extra` (a web source's `sync`). The type is the
 * caller's: a failed refresh of a web source leaves the document `ready` with its last chunks.
 */
export function documentEvent(
  type: 'kb.document.ready' | 'kb.document.failed',
  doc: EventDocument,
  outcome: { status: 'ready' | 'error' | 'failed'; chunk_count: number; error_message: string | null },
  at: Date,
  extra: Record<string, unknown> = {},
): NewEvent {
  return {
    organization_id: doc.organization_id,
    agent_id: doc.agent_id,
    type,
    payload: {
      document: {
        id: doc.id,
        title: doc.title,
        scope: doc.scope,
        agent_id: doc.agent_id,
        status: outcome.status,
        chunk_count: outcome.chunk_count,
        error_message: outcome.error_message,
        updated_at: at.toISOString(),
      },
      ...extra,
    },
  };
}
