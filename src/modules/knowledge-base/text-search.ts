/** PostgreSQL text-search configurations the knowledge base indexes with. */
export const TS_CONFIGS = ['german', 'english', 'french', 'spanish', 'simple'] as const;
export type TsConfig = (typeof TS_CONFIGS)[number];

const BY_LANGUAGE: Record<string, TsConfig> = { de: 'german', en: 'english', fr: 'french', es: 'spanish' };

/** The agent's (or organization document's) language picks the stemmer; anything else: no stemming. */
export function textSearchConfig(language: string | null | undefined): TsConfig {
  return (language && BY_LANGUAGE[language]) || 'simple';
}

/** A document row's own `language` and its agent's (`agent_language`, AGENT_LANGUAGE_SQL). */
type Languages = { language: string | null; agent_language: string | null };

/** Selected beside a document `d`: the language of its agent, for documentSearchConfig. */
export const AGENT_LANGUAGE_SQL = '(SELECT a.language FROM agents a WHERE a.id = d.agent_id) AS agent_language';

/** The row without its languages, with the configuration: organization documents carry their own language, agent documents follow their agent. */
export function documentSearchConfig<T extends Languages>(row: T): Omit<T, keyof Languages> & { ts_config: TsConfig } {
  const { language, agent_language, ...rest } = row;
  return { ...rest, ts_config: textSearchConfig(language ?? agent_language) };
}

export const MAX_SEARCH_TERMS = 32;

/**
 * The words of a free-text question, lower-cased and unique. Only letters and digits survive, so
 * the terms can be joined into a `to_tsquery` expression without any escaping.
 */
export function searchTerms(query: string): string[] {
  const words =
    query
      .normalize('NFC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, MAX_SEARCH_TERMS);
}

/**
 * Any term may match (OR): a question spoken to a voice agent rarely repeats every word of the
 * answer, and the ranking puts chunks that match more of the terms first. Stop words are dropped
 * by PostgreSQL per configuration.
 */
export function orQuery(terms: string[]): string {
  return terms.join(' | ');
}

/** Every term (AND): the chunks that get their own share of the candidates. */
export function andQuery(terms: string[]): string {
  return terms.join(' & ');
}

/**
 * Search ranks at most this many matching chunks, so its cost stays bounded however many chunks
 * match. Each term, and (for several terms) all terms together, take an equal share of them.
 */
export const MAX_RANKED_CHUNKS = 1000;

/** How many candidates one term (or the all-terms match) may bring. */
export function candidateShare(terms: string[]): number {
  const probes = terms.length + (terms.length > 1 ? 1 : 0);
  return Math.max(1, Math.floor(MAX_RANKED_CHUNKS / Math.max(probes, 1)));
}
