/**
 * An agent as stored. On its own (no imports) so that authentication, which may carry an agent read
 * together with the key, can name it without an import cycle.
 */
export type AgentRow = {
  id: string;
  organization_id: string;
  name: string;
  phone_number: string;
  is_active: boolean;
  language: string | null;
  workflow: unknown;
  workflow_updated_at: Date | null;
  created_at: Date;
  updated_at: Date;
  [column: string]: unknown;
};
