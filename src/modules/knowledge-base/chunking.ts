/**
 * Splits a document's text into chunks for indexing: on paragraph boundaries first, on sentence
 * boundaries inside a paragraph that is too long, and on word boundaries only inside a single
 * sentence that is longer than a chunk. Small neighbouring paragraphs share a chunk.
 */
export const DEFAULT_MAX_CHUNK_CHARS = 800;

type Piece = { text: string; endsParagraph: boolean };

/** Words whose trailing period does not end a sentence (German and English). */
const ABBREVIATIONS = new Set([
  'abs',
  'abt',
  'bzw',
  'ca',
  'co',
  'dipl',
  'dr',
  'etc',
  'evtl',
  'fa',
  'fr',
  'ggf',
  'hr',
  'inc',
  'inkl',
  'ing',
  'jr',
  'ltd',
  'max',
  'min',
  'mio',
  'mr',
  'mrs',
  'ms',
  'mrd',
  'no',
  'nr',
  'prof',
  'sog',
  'sr',
  'st',
  'std',
  'str',
  'tel',
  'usw',
  'vgl',
  'vs',
  'zzgl',
  'zb',
]);

export function splitParagraphs(text: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((p) =>
      p
        .split('\n')
        .map((line) => line.replace(/[ \t\f\v]+/g, ' ').trim())
        .filter((line) => line !== '')
        .join('\n'),
    )
    .filter((p) => p !== '');
}

/** Whether a period after `word` is an abbreviation or number rather than the end of a sentence. */
function periodIsNotAnEnd(word: string): boolean {
  const bare = word.replace(/^[("'„“‚‘»«[]+/, '');
  if (bare.length <= 1) return true; // initials and "z. B."
  if (/^\d+$/.test(bare)) return true; // German ordinals: "am 3. Oktober"
  if (bare.includes('.')) return true; // "e.g", "z.B", "u.a"
  return ABBREVIATIONS.has(bare.toLowerCase());
}

export function splitSentences(paragraph: string): string[] {
  const sentences: string[] = [];
  const boundary = /([.!?…]+)(["'”’»«)\]]*)\s+/gu;
  let start = 0;
  for (const match of paragraph.matchAll(boundary)) {
    const end = match.index + match[1]!.length + match[2]!.length;
    const next = paragraph.charAt(match.index + match[0].length);
    if (match[1] === '.' || match[1] === '…') {
      const before = paragraph.slice(start, match.index);
      const word = /\S*$/.exec(before)?.[0] ?? '';
      if (periodIsNotAnEnd(word) || /\p{Ll}/u.test(next)) continue;
    }
    const sentence = paragraph.slice(start, end).trim();
    if (sentence !== '') sentences.push(sentence);
    start = match.index + match[0].length;
  }
  const rest = paragraph.slice(start).trim();
  if (rest !== '') sentences.push(rest);
  return sentences;
}

/** Last resort for one sentence longer than a chunk: cut at spaces, never inside a surrogate pair. */
function splitWords(sentence: string, maxChars: number): string[] {
  const parts: string[] = [];
  let rest = sentence;
  while (rest.length > maxChars) {
    let cut = rest.lastIndexOf(' ', maxChars);
    if (cut < maxChars / 2) cut = maxChars;
    const code = rest.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    parts.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest !== '') parts.push(rest);
  return parts;
}

function piecesOf(paragraph: string, maxChars: number): Piece[] {
  if (paragraph.length <= maxChars) return [{ text: paragraph, endsParagraph: true }];
  const texts = splitSentences(paragraph).flatMap((s) => (s.length <= maxChars ? [s] : splitWords(s, maxChars)));
  return texts.map((text, i) => ({ text, endsParagraph: i === texts.length - 1 }));
}

export function splitIntoChunks(text: string, maxChars = DEFAULT_MAX_CHUNK_CHARS): string[] {
  const chunks: string[] = [];
  let current = '';
  let previousEndedParagraph = false;
  for (const piece of splitParagraphs(text).flatMap((p) => piecesOf(p, maxChars))) {
    const separator = previousEndedParagraph ? '\n\n' : ' ';
    if (current === '') current = piece.text;
    else if (current.length + separator.length + piece.text.length > maxChars) {
      chunks.push(current);
      current = piece.text;
    } else current += separator + piece.text;
    previousEndedParagraph = piece.endsParagraph;
  }
  if (current !== '') chunks.push(current);
  return chunks;
}
