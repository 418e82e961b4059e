import { paginationShape } from '../../api/pagination.js';
import { z } from '../../openapi/zod.js';
import { PII_KINDS } from '../../privacy/pii-redaction.js';
import { AnalysisFieldSchema } from './analysis-fields.js';

export const LANGUAGES = ['de', 'en', 'fr', 'es'] as const;
export const FORMALITIES = ['formal', 'informal'] as const;
export const LLM_PROVIDERS = [
  'azure',
  'openai',
  'gemini',
  'gemini_live',
  'gemini_live_cascade',
  'openai_realtime',
  'openai_realtime_cascade',
  'groq',
] as const;
export const TTS_PROVIDERS = ['cartesia', 'elevenlabs', 'gemini_live', 'openai_realtime'] as const;
export const STT_PROVIDERS = ['deepgram', 'elevenlabs', 'mistral', 'groq'] as const;
export const BUNDESLAENDER = [
  'DE',
  'BW',
  'BY',
  'BE',
  'BB',
  'HB',
  'HH',
  'HE',
  'MV',
  'NI',
  'NW',
  'NRW',
  'RP',
  'SL',
  'SN',
  'ST',
  'SH',
  'TH',
] as const;
export const BACKGROUND_AUDIO_TYPES = ['office', 'cafe', 'home_office'] as const;

export const GreetingVariantSchema = z
  .object({
    greeting: z.string(),
    tag: z.string().optional(),
    from: z.string().optional(),
    to: z.string().optional(),
    min_calls_today: z.number().int().optional(),
  })
  .openapi('GreetingVariant');

export const ScheduleExceptionSchema = z
  .object({
    date: z.string().optional().openapi({ example: '2026-12-24' }),
    from: z.string().optional().openapi({ example: '2026-12-27' }),
    to: z.string().optional().openapi({ example: '2026-12-30' }),
    closed: z.boolean().optional(),
    rules: z.array(z.object({ start_time: z.string(), end_time: z.string() })).optional(),
    note: z.string().optional(),
  })
  .openapi('ScheduleException');

export const AgentScheduleSchema = z
  .object({
    timezone: z.string().openapi({ example: 'Europe/Berlin' }),
    rules: z.array(
      z.object({
        days: z.array(z.number().int().min(0).max(6)),
        start_time: z.string().openapi({ example: '08:00' }),
        end_time: z.string().openapi({ example: '17:00' }),
      }),
    ),
    exceptions: z.array(ScheduleExceptionSchema).optional(),
  })
  .openapi('AgentSchedule');

/** The Agent as the API returns it (response schema for the OpenAPI document). */
export const AgentSchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    name: z.string(),
    phone_number: z.string(),
    is_active: z.boolean(),
    language: z.enum(LANGUAGES).nullable(),
    formality: z.enum(FORMALITIES).nullable(),
    llm_provider: z.enum(LLM_PROVIDERS).nullable(),
    llm_model: z.string().nullable(),
    llm_temperature: z.number().nullable(),
    tts_provider: z.enum(TTS_PROVIDERS).nullable(),
    voice_id: z.string().nullable(),
    realtime_voice: z.string().nullable(),
    speaking_rate: z.number().nullable(),
    stt_provider: z.enum(STT_PROVIDERS).nullable(),
    stt_keywords: z.array(z.string()).nullable(),
    prompt: z.string(),
    greeting: z.string().nullable(),
    greeting_variants: z.array(GreetingVariantSchema).nullable(),
    post_call_webhook_url: z.string().nullable(),
    post_call_webhook_events: z.array(z.string()).openapi({ description: 'Event types sent to post_call_webhook_url' }),
    post_call_webhook_retries: z
      .boolean()
      .openapi({ description: 'Failed deliveries to post_call_webhook_url are retried (Standard Webhooks schedule)' }),
    schedule: AgentScheduleSchema.nullable(),
    backup_agent_id: z.uuid().nullable(),
    allow_greeting_interruption: z.boolean().nullable(),
    short_calls_auto_edit: z.boolean(),
    track_caller_name: z.boolean(),
    transfer_timeout_seconds: z.number().int().nullable(),
    bundesland: z.enum(BUNDESLAENDER),
    background_audio_enabled: z.boolean(),
    background_audio_type: z.enum(BACKGROUND_AUDIO_TYPES),
    background_audio_volume: z.number(),
    thinking_sound_enabled: z.boolean(),
    thinking_sound_volume: z.number(),
    aic_enhancement_enabled: z.boolean(),
    vacation_mode: z.boolean().openapi({ description: 'The backup agent takes the calls (see status)' }),
    vacation_end: z.iso.datetime().nullable(),
    vacation_notdienst: z.boolean(),
    require_passing_test_cases: z
      .boolean()
      .openapi({ description: 'Configuration writes must keep every test case of the agent passing' }),
    redact_pii: z.array(z.enum(PII_KINDS)).openapi({
      description:
        'Personal data call intake replaces with placeholders ([PHONE], [EMAIL], [IBAN], [CARD], [BIRTHDATE])',
    }),
    analysis_fields: z.array(AnalysisFieldSchema).openapi({ description: 'Typed post-call outcome fields' }),
    retention_days: z.number().int().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Agent');

export const listAgentsQuery = z.object({ ...paginationShape });
