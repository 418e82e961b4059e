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

/** `first last`, or whichever part exists; null without either. */
export function composeName(firstName: string | null, lastName: string | null): string | null {
  const name = [firstName, lastName].filter((p): p is string => !!p).join(' ');
  return name === '' ? null : name;
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
  const nameSent = changes.customer_name !== undefined;
  if (partsSent && !nameSent) {
    const composed = composeName(merged.first_name, merged.last_name);
    return composed === null ? merged : { ...merged, customer_name: composed };
  }
  if (nameSent && !partsSent) {
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
