import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request } from 'express';
import busboy from 'busboy';
import { PayloadTooLargeError, ValidationError } from '../../errors/index.js';
import type { ReceivedFile } from './kb-files.service.js';

/**
 * Reads a `multipart/form-data` upload (`file`, optional `title`) as it streams in: the file goes
 * to a temporary file while its SHA-256 and size are counted; past `maxBytes` the upload stops at
 * once with 413 (the connection is closed, the rest is never read). Nothing is held in memory
 * beyond the stream's own buffers.
 */
export function receiveUpload(req: Request, maxBytes: number): Promise<ReceivedFile> {
  if (!req.is('multipart/form-data')) {
    return Promise.reject(new ValidationError('Content-Type must be multipart/form-data with a file field'));
  }
  const path = join(tmpdir(), `kb-upload-${randomUUID()}`);
  const cleanup = () => rm(path, { force: true });
  return new Promise<ReceivedFile>((resolve, reject) => {
    let settled = false;
    let title: string | undefined;
    let file: Omit<ReceivedFile, 'title' | 'path' | 'cleanup'> | undefined;
    let writing: Promise<void> | undefined;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      // The rest of the body is not read: the answer closes the connection.
      req.resume();
      void cleanup();
      reject(error);
    };
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { fileSize: maxBytes, files: 1, fields: 5, fieldSize: 2000, parts: 10 },
      });
    } catch {
      reject(new ValidationError('Content-Type must be multipart/form-data with a boundary'));
      return;
    }
    parser.on('field', (name, value) => {
      if (name === 'title') title = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || file) {
        stream.resume();
        return;
      }
      const hash = createHash('sha256');
      let bytes = 0;
      const out = createWriteStream(path);
      file = { filename: info.filename ?? 'upload', declared_type: info.mimeType, bytes: 0, sha256: '' };
      writing = new Promise<void>((done, broken) => {
        stream.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          hash.update(chunk);
        });
        stream.on('limit', () => {
          stream.unpipe(out);
          stream.resume();
          out.destroy();
          fail(new PayloadTooLargeError(`The file is larger than ${maxBytes} bytes`));
        });
        stream.on('end', () => {
          file!.bytes = bytes;
          file!.sha256 = hash.digest('hex');
        });
        out.on('finish', () => done());
        out.on('error', broken);
        stream.pipe(out);
      });
      // After a failure nobody waits for the write any more.
      writing.catch(() => undefined);
    });
    parser.on('error', () => fail(new ValidationError('The multipart body is malformed')));
    parser.on('close', () => {
      if (settled) return;
      if (!file || !writing)
        return fail(new ValidationError('Request body is invalid', [{ field: 'file', message: 'Required' }]));
      writing.then(
        () => {
          if (settled) return;
          if (title !== undefined && (title.trim() === '' || title.length > 500))
            return fail(
              new ValidationError('Request body is invalid', [
                { field: 'title', message: 'Must be 1 to 500 characters' },
              ]),
            );
          settled = true;
          resolve({ ...file!, title: title?.trim(), path, cleanup });
        },
        (error: Error) => fail(error),
      );
    });
    req.on('aborted', () => fail(new ValidationError('The upload was interrupted')));
    req.pipe(parser);
  });
}
