import { open } from 'node:fs/promises';
import type { ExtractableType } from './extract.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const SNIFF_BYTES = 64 * 1024;

export type Detected = { supported: true; media_type: ExtractableType } | { supported: false; found: string };

/**
 * The type of a file from its content, never from its name or declared type: `file-type` reads the
 * magic bytes (and, for ZIP containers, the entries that make a DOCX). A file it does not recognise
 * is text when its first 64 KB are valid UTF-8 without NUL bytes: HTML when it starts like an HTML
 * document, Markdown when it has Markdown headings, lists or links, plain text otherwise.
 * `file-type` is imported on the first upload, as extract.ts imports its libraries.
 */
export async function detectMediaType(path: string): Promise<Detected> {
  const { fileTypeFromFile } = await import('file-type');
  const found = await fileTypeFromFile(path).catch(() => undefined);
  if (found) {
    if (found.mime === 'application/pdf') return { supported: true, media_type: 'application/pdf' };
    if (found.mime === DOCX) return { supported: true, media_type: DOCX };
    return { supported: false, found: `${found.mime} (${found.ext})` };
  }
  const handle = await open(path, 'r');
  let head: Buffer;
  let size: number;
  try {
    size = (await handle.stat()).size;
    const buffer = Buffer.alloc(Math.min(SNIFF_BYTES, size));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  if (head.length === 0) return { supported: false, found: 'an empty file' };
  if (head.includes(0)) return { supported: false, found: 'binary data (application/octet-stream)' };
  // A multi-byte character cut at the end of the sample is not an error.
  const sample = size > head.length ? head.subarray(0, head.length - 3) : head;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(sample);
  } catch {
    return { supported: false, found: 'binary data or text that is not UTF-8 (application/octet-stream)' };
  }
  const start = text
    .replace(/^\uFEFF/, '')
    .trimStart()
    .slice(0, 512)
    .toLowerCase();
  if (/^(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>]|<!--[\s\S]*?-->\s*<(!doctype html|html))/.test(start))
    return { supported: true, media_type: 'text/html' };
  if (/^#{1,6} \S/m.test(text) || /^\s*[-*+] \S/m.test(text) || /\[[^\]\n]+\]\([^)\s]+\)/.test(text))
    return { supported: true, media_type: 'text/markdown' };
  return { supported: true, media_type: 'text/plain' };
}
