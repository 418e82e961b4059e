import { describe, expect, it } from 'vitest';
import { splitIntoChunks, splitParagraphs, splitSentences } from '../../src/modules/knowledge-base/chunking.js';
import {
  andQuery,
  candidateShare,
  MAX_RANKED_CHUNKS,
  orQuery,
  searchTerms,
  textSearchConfig,
} from '../../src/modules/knowledge-base/text-search.js';

describe('splitParagraphs', () => {
  it('splits on blank lines, keeps single line breaks and collapses runs of spaces', () => {
    expect(splitParagraphs('Erster  Absatz\r\nzweite Zeile\r\n\r\n \n\nZweiter\tAbsatz  \n')).toEqual([
      'Erster Absatz\nzweite Zeile',
      'Zweiter Absatz',
    ]);
  });

  it('returns nothing for whitespace only', () => {
    expect(splitParagraphs(' \n\n\t ')).toEqual([]);
  });
});

describe('splitSentences', () => {
  it('splits English sentences on periods, question and exclamation marks', () => {
    expect(splitSentences('We ship today. Where is my parcel? It is late! Thanks.')).toEqual([
      'We ship today.',
      'Where is my parcel?',
      'It is late!',
      'Thanks.',
    ]);
  });

  it('does not split after German abbreviations, initials or ordinals', () => {
    expect(
      splitSentences('Wir kommen z. B. am 3. Oktober mit Dr. Müller vorbei. Das ist u.a. wichtig. Bis dann.'),
    ).toEqual(['Wir kommen z. B. am 3. Oktober mit Dr. Müller vorbei.', 'Das ist u.a. wichtig.', 'Bis dann.']);
  });

  it('does not split before a lower-case word and keeps closing quotes with their sentence', () => {
    expect(splitSentences('He said "Stop." Then we left. It costs approx. five euros.')).toEqual([
      'He said "Stop."',
      'Then we left.',
      'It costs approx. five euros.',
    ]);
  });
});

describe('splitIntoChunks', () => {
  it('keeps a short text in one chunk and joins its paragraphs with a blank line', () => {
    expect(splitIntoChunks('Title\n\nFirst paragraph.\n\nSecond paragraph.', 100)).toEqual([
      'Title\n\nFirst paragraph.\n\nSecond paragraph.',
    ]);
  });

  it('starts a new chunk at a paragraph boundary when the next paragraph does not fit', () => {
    const a = 'A'.repeat(40);
    const b = 'B'.repeat(40);
    const c = 'C'.repeat(40);
    expect(splitIntoChunks(`${a}\n\n${b}\n\n${c}`, 90)).toEqual([`${a}\n\n${b}`, c]);
  });

  it('splits a paragraph longer than a chunk on sentence boundaries', () => {
    const paragraph = 'One sentence here. Another sentence there. A third one follows. And the last one ends.';
    const chunks = splitIntoChunks(paragraph, 45);
    expect(chunks).toEqual([
      'One sentence here. Another sentence there.',
      'A third one follows. And the last one ends.',
    ]);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(45);
  });

  it('cuts a single sentence longer than a chunk at spaces only', () => {
    const sentence = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    const chunks = splitIntoChunks(sentence, 50);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(50);
      expect(chunk).toMatch(/^word\d+( word\d+)*$/);
    }
    expect(chunks.join(' ')).toBe(sentence);
  });

  it('never cuts a surrogate pair in half', () => {
    const chunks = splitIntoChunks('😀'.repeat(30), 15);
    expect(chunks.join('')).toBe('😀'.repeat(30));
    for (const chunk of chunks) expect(chunk).not.toMatch(/[\ud800-\udbff]$/);
  });

  it('loses no word of the text', () => {
    const text = 'Erster Satz. Zweiter Satz!\n\nDritter Absatz mit z. B. Abkürzungen. Und noch einer?\n\nEnde.';
    const words = (s: string) => s.split(/\s+/).filter(Boolean);
    expect(words(splitIntoChunks(text, 30).join(' '))).toEqual(words(text));
  });
});

describe('text search helpers', () => {
  it.each([
    ['de', 'german'],
    ['en', 'english'],
    ['fr', 'french'],
    ['es', 'spanish'],
    [null, 'simple'],
    ['it', 'simple'],
  ])('indexes language %s with the %s configuration', (language, config) => {
    expect(textSearchConfig(language)).toBe(config);
  });

  it('keeps only unique lower-case words, so operators in the question cannot reach to_tsquery', () => {
    expect(searchTerms("Rechnung & (Zahlung) | !Mahnung: rechnung 'x'")).toEqual([
      'rechnung',
      'zahlung',
      'mahnung',
      'x',
    ]);
    expect(orQuery(['a', 'b'])).toBe('a | b');
    expect(andQuery(['a', 'b'])).toBe('a & b');
  });
});

describe('candidateShare', () => {
  it('splits the ranked candidates evenly between the words and, for several words, all words together', () => {
    expect(MAX_RANKED_CHUNKS).toBe(1000);
    expect(candidateShare(['a'])).toBe(1000);
    expect(candidateShare(['a', 'b'])).toBe(333);
    expect(candidateShare(['a', 'b', 'c'])).toBe(250);
    const most = searchTerms(Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '));
    expect(most).toHaveLength(32);
    expect(candidateShare(most)).toBe(30);
  });
});
