import type { Knex } from 'knex';

/**
 * Outbound calling: campaigns, call jobs, their attempts, the do-not-call list and consent records.
 *
 * A job is claimable while `status = 'scheduled'` and `next_attempt_at` has come: the partial index
 * over exactly those rows keeps a claim an index range scan however many finished jobs the table
 * holds. Attempts whose lease is open are found through their own partial index (lease expiry).
 * Consent records outlive jobs and calls (kept five years from the last call): they reference
 * nothing that a deletion could take away except the organization.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE outbound_campaigns (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      name text NOT NULL,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'cancelled')),
      purpose text NOT NULL CHECK (purpose IN ('callback', 'reminder', 'follow_up', 'marketing')),
      "window" jsonb NOT NULL,
      respect_opening_hours boolean NOT NULL DEFAULT true,
      max_concurrent integer NOT NULL CHECK (max_concurrent BETWEEN 1 AND 50),
      max_attempts integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 10),
      retry_after_minutes integer NOT NULL CHECK (retry_after_minutes BETWEEN 5 AND 1440),
      variables jsonb NOT NULL DEFAULT '{}',
      not_before timestamptz,
      not_after timestamptz,
      finished_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX outbound_campaigns_agent ON outbound_campaigns (agent_id, created_at DESC, id DESC);

    CREATE TABLE outbound_jobs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      campaign_id uuid REFERENCES outbound_campaigns(id) ON DELETE CASCADE,
      to_number text NOT NULL,
      contact_id uuid REFERENCES contacts(id) ON DELETE SET NULL,
      purpose text NOT NULL CHECK (purpose IN ('callback', 'reminder', 'follow_up', 'marketing')),
      status text NOT NULL CHECK (status IN ('scheduled', 'in_progress', 'completed', 'failed', 'cancelled', 'blocked')),
      "window" jsonb NOT NULL,
      respect_opening_hours boolean NOT NULL DEFAULT true,
      not_before timestamptz,
      not_after timestamptz,
      max_attempts integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 10),
      retry_after_minutes integer NOT NULL CHECK (retry_after_minutes BETWEEN 5 AND 1440),
      variables jsonb NOT NULL DEFAULT '{}',
      external_id text,
      consent jsonb,
      next_attempt_at timestamptz,
      attempt_count integer NOT NULL DEFAULT 0,
      failure_reason text,
      finished_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT outbound_jobs_agent_external_id UNIQUE (agent_id, external_id)
    );
    CREATE INDEX outbound_jobs_due ON outbound_jobs (next_attempt_at, id) WHERE status = 'scheduled';
    CREATE INDEX outbound_jobs_running ON outbound_jobs (agent_id, campaign_id) WHERE status = 'in_progress';
    CREATE INDEX outbound_jobs_agent_list ON outbound_jobs (agent_id, created_at DESC, id DESC);
    CREATE INDEX outbound_jobs_campaign ON outbound_jobs (campaign_id, status) WHERE campaign_id IS NOT NULL;
    CREATE INDEX outbound_jobs_number ON outbound_jobs (organization_id, to_number);

    CREATE TABLE outbound_attempts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      job_id uuid NOT NULL REFERENCES outbound_jobs(id) ON DELETE CASCADE,
      number integer NOT NULL,
      outcome text CHECK (outcome IN ('answered', 'no_answer', 'busy', 'voicemail', 'failed', 'rejected')),
      lease_expired boolean NOT NULL DEFAULT false,
      call_id text,
      claimed_at timestamptz NOT NULL,
      lease_expires_at timestamptz NOT NULL,
      finished_at timestamptz,
      UNIQUE (job_id, number)
    );
    CREATE INDEX outbound_attempts_open ON outbound_attempts (lease_expires_at) WHERE outcome IS NULL;

    CREATE TABLE do_not_call (
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      phone_number text NOT NULL,
      reason text,
      source text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (organization_id, phone_number)
    );

    CREATE TABLE outbound_consents (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      agent_id uuid,
      job_id uuid,
      phone_number text NOT NULL,
      basis text NOT NULL,
      obtained_at timestamptz NOT NULL,
      source text NOT NULL,
      last_call_at timestamptz,
      keep_until timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX outbound_consents_number ON outbound_consents (organization_id, phone_number);
    CREATE INDEX outbound_consents_job ON outbound_consents (job_id);
    CREATE INDEX outbound_consents_keep_until ON outbound_consents (keep_until);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE outbound_consents;
    DROP TABLE do_not_call;
    DROP TABLE outbound_attempts;
    DROP TABLE outbound_jobs;
    DROP TABLE outbound_campaigns;
  `);
}
