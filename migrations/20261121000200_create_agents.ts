import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('phone_number').notNullable().unique();
    t.boolean('is_active').notNullable().defaultTo(true);
    t.text('language').nullable();
    t.text('formality').nullable();
    t.text('llm_provider').nullable();
    t.text('llm_model').nullable();
    t.double('llm_temperature').nullable();
    t.text('tts_provider').nullable();
    t.text('voice_id').nullable();
    t.text('realtime_voice').nullable();
    t.double('speaking_rate').nullable();
    t.text('stt_provider').nullable();
    t.specificType('stt_keywords', 'text[]').nullable();
    t.text('prompt').notNullable().defaultTo('');
    t.text('greeting').nullable();
    t.jsonb('greeting_variants').nullable();
    t.text('post_call_webhook_url').nullable();
    t.jsonb('schedule').nullable();
    // RESTRICT: an agent named as another agent's backup cannot be deleted (409).
    t.uuid('backup_agent_id').nullable().references('agents.id').onDelete('RESTRICT');
    t.boolean('allow_greeting_interruption').nullable();
    t.boolean('short_calls_auto_edit').notNullable().defaultTo(false);
    t.boolean('track_caller_name').notNullable().defaultTo(false);
    t.integer('transfer_timeout_seconds').nullable();
    t.text('bundesland').notNullable().defaultTo('DE');
    t.boolean('background_audio_enabled').notNullable().defaultTo(false);
    t.text('background_audio_type').notNullable().defaultTo('office');
    t.double('background_audio_volume').notNullable().defaultTo(0.5);
    t.boolean('thinking_sound_enabled').notNullable().defaultTo(false);
    t.double('thinking_sound_volume').notNullable().defaultTo(0.5);
    t.boolean('aic_enhancement_enabled').notNullable().defaultTo(false);
    t.integer('retention_days').nullable();
    t.jsonb('metadata').nullable();
    t.jsonb('workflow').nullable();
    t.timestamp('workflow_updated_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['organization_id', 'created_at', 'id']);
    t.index(['backup_agent_id']);
  });
  await knex.raw(`ALTER TABLE agents
    ADD CONSTRAINT agents_name_length CHECK (char_length(name) BETWEEN 1 AND 255),
    ADD CONSTRAINT agents_phone_e164 CHECK (phone_number ~ '^\\+[1-9][0-9]{1,14}$'),
    ADD CONSTRAINT agents_language CHECK (language IN ('de', 'en', 'fr', 'es')),
    ADD CONSTRAINT agents_formality CHECK (formality IN ('formal', 'informal')),
    ADD CONSTRAINT agents_llm_provider CHECK (llm_provider IN ('azure', 'openai', 'gemini', 'gemini_live',
      'gemini_live_cascade', 'openai_realtime', 'openai_realtime_cascade', 'groq')),
    ADD CONSTRAINT agents_llm_temperature CHECK (llm_temperature BETWEEN 0 AND 2),
    ADD CONSTRAINT agents_tts_provider CHECK (tts_provider IN ('cartesia', 'elevenlabs', 'gemini_live', 'openai_realtime')),
    ADD CONSTRAINT agents_speaking_rate CHECK (speaking_rate BETWEEN 0.5 AND 2),
    ADD CONSTRAINT agents_stt_provider CHECK (stt_provider IN ('deepgram', 'elevenlabs', 'mistral', 'groq')),
    ADD CONSTRAINT agents_stt_keywords_count CHECK (cardinality(stt_keywords) <= 100),
    ADD CONSTRAINT agents_prompt_length CHECK (char_length(prompt) <= 50000),
    ADD CONSTRAINT agents_greeting_length CHECK (char_length(greeting) <= 2000),
    ADD CONSTRAINT agents_backup_not_self CHECK (backup_agent_id <> id),
    ADD CONSTRAINT agents_transfer_timeout CHECK (transfer_timeout_seconds BETWEEN 5 AND 45),
    ADD CONSTRAINT agents_bundesland CHECK (bundesland IN ('DE', 'BW', 'BY', 'BE', 'BB', 'HB', 'HH', 'HE', 'MV',
      'NI', 'NW', 'NRW', 'RP', 'SL', 'SN', 'ST', 'SH', 'TH')),
    ADD CONSTRAINT agents_background_audio_type CHECK (background_audio_type IN ('office', 'cafe', 'home_office')),
    ADD CONSTRAINT agents_background_audio_volume CHECK (background_audio_volume BETWEEN 0 AND 1),
    ADD CONSTRAINT agents_thinking_sound_volume CHECK (thinking_sound_volume BETWEEN 0 AND 1),
    ADD CONSTRAINT agents_retention_days CHECK (retention_days > 0)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('agents');
}
