/** Pure rules of contacts: name composition and splitting, tag clean-up. */

export type NameParts = {
  customer_name: string | null;
  salutation: string | null;
  first_name: string | null;
  last_name: string | null;
};

const SALUTATIONS = new Map([
  ['herr', 'Herr'],
  ['frau', 'Frau'],
]);

/**
 * `First Last`; without a first name the salutation leads (`Herr Fey`), as a German display name
 * reads; null without first and last name.
 */
export function composeName(
  firstName: string | null,
  lastName: string | null,
  salutation: string | null = null,
): string | null {
  if (!firstName && !lastName) return null;
  const parts = firstName ? [firstName, lastName] : [salutation, lastName];
  return parts.filter((p): p is string => !!p).join(' ');
}

/** How the name parts came about (TalkPilot's name_parsed); the agent greets by name unless unclear. */
export type NameParsed = 'auto' | 'llm' | 'manual' | 'unclear';

/**
 * name_parsed after a change: parts sent explicitly are manual; a name sent alone is auto when it
 * could be split, unclear when not (or cleared); nothing name-related sent keeps the current value.
 */
export function nameParsed(current: NameParsed | null, changes: Partial<NameParts>, result: NameParts): NameParsed {
  const partsSent = changes.first_name !== undefined || changes.last_name !== undefined;
  if (partsSent) return 'manual';
  if (changes.customer_name !== undefined) {
    return result.customer_name !== null && (result.first_name !== null || result.last_name !== null)
      ? 'auto'
      : 'unclear';
  }
  if (changes.salutation !== undefined && current === null) return 'manual';
  return current ?? (result.first_name !== null || result.last_name !== null ? 'manual' : 'unclear');
}

/** Whether the request touches the name at all (then a person maintains it: name_source manual). */
export function nameSent(changes: Partial<NameParts>): boolean {
  return (['customer_name', 'salutation', 'first_name', 'last_name'] as const).some((k) => changes[k] !== undefined);
}

/**
 * Splits a full name where that is unambiguous: `First Last`, `Last, First`, and a leading
 * `Herr`/`Frau` (`Herr Müller` has only a last name). One word alone, or three words without a
 * comma (`Anna Maria Schmidt`, `Max von Müller`), could be split more than one way: no parts.
 */
export function splitName(name: string): {
  salutation: string | null;
  first_name: string | null;
  last_name: string | null;
} {
  const none = { salutation: null, first_name: null, last_name: null };
  const commaParts = name.split(',');
  if (commaParts.length === 2) {
    const [last, first] = commaParts.map((p) => p.trim()) as [string, string];
    return last && first ? { salutation: null, first_name: first, last_name: last } : none;
  }
  if (commaParts.length > 2) return none;
  let words = name.trim().split(/\s+/).filter(Boolean);
  const salutation = words.length > 1 ? (SALUTATIONS.get(words[0]!.toLowerCase()) ?? null) : null;
  if (salutation) words = words.slice(1);
  if (words.length === 2) return { salutation, first_name: words[0]!, last_name: words[1]! };
  if (salutation && words.length === 1) return { salutation, first_name: null, last_name: words[0]! };
  return { ...none, salutation };
}

/**
 * The name fields to store after a create (current all null) or an update. Parts sent without a
 * name recompose the name; a name sent without parts is split into them (parts cleared where the
 * split is ambiguous); both sent are stored as sent. A salutation found in the name is taken only
 * when the contact has none and the request sets none.
 */
export function resolveNames(current: NameParts, changes: Partial<NameParts>): NameParts {
  const merged: NameParts = { ...current, ...changes };
  const partsSent = changes.first_name !== undefined || changes.last_name !== undefined;
  const fullNameSent = changes.customer_name !== undefined;
  if ((partsSent || changes.salutation !== undefined) && !fullNameSent) {
    const composed = composeName(merged.first_name, merged.last_name, merged.salutation);
    return composed === null ? merged : { ...merged, customer_name: composed };
  }
  if (fullNameSent && !partsSent) {
    const split =
      merged.customer_name === null
        ? { salutation: null, first_name: null, last_name: null }
        : splitName(merged.customer_name);
    return {
      ...merged,
      first_name: split.first_name,
      last_name: split.last_name,
      salutation: changes.salutation !== undefined ? changes.salutation : (current.salutation ?? split.salutation),
    };
  }
  return merged;
}

/** Trimmed, empty ones dropped, de-duplicated case-insensitively (the first spelling stays). */
export function cleanTags(tags: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of tags) {
    const tag = raw.trim();
    const key = tag.toLowerCase();
    if (tag === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(tag);
  }
  return out;
}
