import type { Knex } from 'knex';

const TOOL_TYPES = [
  'http_request',
  'transfer_call',
  'monitored_transfer',
  'end_call',
  'extract_variable',
  'play_tone',
  'knowledge_base',
  'set_call_result',
  'identify_caller',
  'switch_agent',
  'verify_value',
  'list_available_slots',
  'book_appointment',
  'resolve_contact',
];

/**
 * Tools: the 14 types, and the employee link (an employee still linked to a tool cannot be
 * deleted). NO ACTION rather than RESTRICT: it is checked at the end of the statement, so deleting
 * the agent, which cascades to both its tools and its employees, still works. Contacts: E.164 numbers, and the main phone number unique per agent.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE tools
    ADD CONSTRAINT tools_tool_type CHECK (tool_type IN (${TOOL_TYPES.map((t) => `'${t}'`).join(', ')})),
    ADD CONSTRAINT tools_employee_fk FOREIGN KEY (employee_id) REFERENCES employees (id) ON DELETE NO ACTION`);
  await knex.raw(`CREATE INDEX tools_employee_idx ON tools (employee_id) WHERE employee_id IS NOT NULL`);

  await knex.raw(`ALTER TABLE contacts
    ADD CONSTRAINT contacts_phone_e164 CHECK (phone_number ~ '^\\+[1-9][0-9]{1,14}$'),
    ADD CONSTRAINT contacts_mobile_e164 CHECK (mobile_number ~ '^\\+[1-9][0-9]{1,14}$'),
    ADD CONSTRAINT contacts_landline_e164 CHECK (landline_number ~ '^\\+[1-9][0-9]{1,14}$')`);
  await knex.raw(
    `CREATE UNIQUE INDEX contacts_agent_phone_unique ON contacts (agent_id, phone_number) WHERE phone_number IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS contacts_agent_phone_unique`);
  await knex.raw(`ALTER TABLE contacts
    DROP CONSTRAINT IF EXISTS contacts_phone_e164,
    DROP CONSTRAINT IF EXISTS contacts_mobile_e164,
    DROP CONSTRAINT IF EXISTS contacts_landline_e164`);
  await knex.raw(`DROP INDEX IF EXISTS tools_employee_idx`);
  await knex.raw(
    `ALTER TABLE tools DROP CONSTRAINT IF EXISTS tools_employee_fk, DROP CONSTRAINT IF EXISTS tools_tool_type`,
  );
}
