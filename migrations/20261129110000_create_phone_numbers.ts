import type { Knex } from 'knex';

/**
 * Phone numbers as resources of their own. `number` is unique across the service; an agent has at
 * most one number (`agent_id` unique). `agents.phone_number` stays the read-side copy of the number
 * assigned to the agent: a new agent's number becomes a number resource assigned to it in the same
 * statement (trigger below, whoever inserts the agent), and the numbers service rewrites the copy
 * in the transaction that moves a number. SIP credentials are stored sealed (AES-256-GCM), never
 * in clear.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE phone_numbers (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      number text NOT NULL,
      label text NULL,
      provider text NULL,
      sip_credentials text NULL,
      agent_id uuid NULL REFERENCES agents(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT phone_numbers_number_unique UNIQUE (number),
      CONSTRAINT phone_numbers_agent_unique UNIQUE (agent_id),
      CONSTRAINT phone_numbers_number_e164 CHECK (number ~ '^\\+[1-9][0-9]{1,14}$'),
      CONSTRAINT phone_numbers_provider_known CHECK (provider IN ('sipgate', 'telekom', 'twilio', 'sip'))
    );
    CREATE INDEX phone_numbers_organization ON phone_numbers (organization_id, created_at, id);

    INSERT INTO phone_numbers (organization_id, number, agent_id, created_at, updated_at)
      SELECT organization_id, phone_number, id, created_at, created_at FROM agents;

    -- A new agent's number: a new resource, or an unassigned one of the same organization taken over.
    -- Another organization's number (or one held elsewhere) refuses the agent as a unique violation.
    CREATE FUNCTION claim_new_agent_number() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO phone_numbers (organization_id, number, agent_id, created_at, updated_at)
        VALUES (NEW.organization_id, NEW.phone_number, NEW.id, now(), now())
        ON CONFLICT (number) DO UPDATE SET agent_id = EXCLUDED.agent_id, updated_at = now()
          WHERE phone_numbers.agent_id IS NULL AND phone_numbers.organization_id = EXCLUDED.organization_id;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'phone number % is taken', NEW.phone_number
          USING ERRCODE = 'unique_violation', CONSTRAINT = 'phone_numbers_number_unique';
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER agents_claim_number AFTER INSERT ON agents
      FOR EACH ROW EXECUTE FUNCTION claim_new_agent_number();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER agents_claim_number ON agents;
    DROP FUNCTION claim_new_agent_number();
    DROP TABLE phone_numbers;
  `);
}
