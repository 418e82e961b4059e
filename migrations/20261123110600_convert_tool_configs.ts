import type { Knex } from 'knex';

/**
 * Stored tool configs in TalkPilot's field names where the old form maps one to one: http_request
 * `timeout` as a string of milliseconds, end_call `goodbye_message`, set_call_result without config,
 * switch_agent without the dropped handover fields. Other old configs stay as stored; the next
 * PATCH of such a tool names what to change.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`UPDATE tools SET config = jsonb_set(config, '{timeout}', to_jsonb((config->>'timeout')))
    WHERE tool_type = 'http_request' AND jsonb_typeof(config->'timeout') = 'number'`);
  await knex.raw(`UPDATE tools
    SET config = (config - 'farewell_message') || jsonb_build_object('goodbye_message', config->'farewell_message')
    WHERE tool_type = 'end_call' AND config->'farewell_message' IS NOT NULL`);
  await knex.raw(`UPDATE tools SET config = '{}'::jsonb WHERE tool_type = 'set_call_result'`);
  await knex.raw(`UPDATE tools
    SET config = (config - 'handover_message' - 'carry_context') || jsonb_build_object('ring_count', 1)
    WHERE tool_type = 'switch_agent' AND config->'ring_count' IS NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`UPDATE tools SET config = jsonb_set(config, '{timeout}', to_jsonb((config->>'timeout')::int))
    WHERE tool_type = 'http_request' AND jsonb_typeof(config->'timeout') = 'string'`);
  await knex.raw(`UPDATE tools
    SET config = (config - 'goodbye_message') || jsonb_build_object('farewell_message', config->'goodbye_message')
    WHERE tool_type = 'end_call' AND config->'goodbye_message' IS NOT NULL`);
}
