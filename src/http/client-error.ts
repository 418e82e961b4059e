import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

type ParserError = Error & { code?: string };

/** Node's parser codes that mean "the request line or headers are too large". */
const TOO_LARGE = new Set(['HPE_HEADER_OVERFLOW', 'HPE_CHUNK_EXTENSIONS_OVERFLOW']);

function statusOf(error: ParserError): { status: number; reason: string; message: string } {
  if (error.code !== undefined && TOO_LARGE.has(error.code)) {
    return { status: 431, reason: 'Request Header Fields Too Large', message: 'Request headers are too large' };
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, reason: 'Request Timeout', message: 'The request was not received in time' };
  }
  return { status: 400, reason: 'Bad Request', message: 'The request could not be parsed as HTTP/1.1' };
}

/** The error envelope as a raw HTTP/1.1 response; the connection is closed after it. */
function answerRaw(socket: Duplex, status: number, reason: string, message: string): void {
  const requestId = randomUUID();
  const body = JSON.stringify({ error: { code: 'VALIDATION_ERROR', message, request_id: requestId } });
  socket.end(
    [
      `HTTP/1.1 ${status} ${reason}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      'X-Content-Type-Options: nosniff',
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}

/**
 * Requests Node's own HTTP parser refuses (unknown method, oversized headers, a malformed request
 * line) never reach Express: answer them with the same error envelope, as a raw HTTP/1.1 response,
 * and close the connection (the parser state is lost). A socket already gone is just destroyed.
 *
 * `CONNECT` never reaches Express either: Node hands it to the server's `'connect'` listeners and,
 * with none, closes the connection without a word. This API is no proxy, so it is a 400 too.
 */
export function answerParserErrors(server: Server): void {
  server.on('clientError', (error: ParserError, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, reason, message } = statusOf(error);
    answerRaw(socket, status, reason, message);
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    answerRaw(socket, 400, 'Bad Request', 'CONNECT is not supported: this is not a proxy');
  });
}
