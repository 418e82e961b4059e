import { sharedRepresentation } from '../../api/entity-tag.js';
import { derivedOf } from '../../cache/read-cache.js';
import { toAgent, type Agent, type AgentRow } from './agent.repository.js';

/**
 * The Agent of a row, built once per row the read cache shares (frozen, with a slot that keeps its
 * encoded bytes and tag: `sharedRepresentation`) and anew for a row read for this request only.
 * Here rather than in the repository, which returns rows and fields, never the bytes of an answer.
 */
export function toAgentOfRow(row: Readonly<AgentRow>): Agent {
  const derived = derivedOf(row);
  if (!derived) return toAgent(row);
  return (derived.agent ??= sharedRepresentation(toAgent(row))) as Agent;
}
