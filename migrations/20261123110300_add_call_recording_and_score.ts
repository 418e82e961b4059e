import type { Knex } from 'knex';

/** The recording's URL and the call's quality score (1 to 10), as TalkPilot's call detail shows them. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('calls', (t) => {
    t.text('audio_file_url').nullable();
    t.double('final_score').nullable();
  });
  await knex.raw(`ALTER TABLE calls
    ADD CONSTRAINT calls_final_score CHECK (final_score BETWEEN 1 AND 10),
    ADD CONSTRAINT calls_audio_file_url_length CHECK (char_length(audio_file_url) <= 4096)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('calls', (t) => {
    t.dropColumn('final_score');
    t.dropColumn('audio_file_url');
  });
}
