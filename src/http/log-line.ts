import { pino, type Level, type Logger } from 'pino';

const {
  lsCacheSym,
  timeSym,
  chindingsSym,
  messageKeySym,
  endSym,
  streamSym,
  needsMetadataGsym,
  mixinSym,
  hooksSym,
  formattersSym,
  nestedKeySym,
  msgPrefixSym,
} = pino.symbols as unknown as Record<string, symbol>;

const LEVELS: Record<Level, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

type Internals = Record<symbol, unknown>;
type Stream = { write(line: string): unknown } & Record<symbol, unknown>;

/**
 * Whether `logger` writes a line as the plain sum of its parts: no mixin, no log-method or
 * stream-write hook, no log formatter, no nested key, no message prefix, a stream that takes a
 * string and needs no metadata (not a multistream). The product's logger (src/logger.ts) does.
 */
function plain(l: Internals): boolean {
  const stream = l[streamSym] as Stream | undefined;
  const hooks = l[hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
  const formatters = l[formattersSym] as { log?: unknown } | undefined;
  return (
    typeof l[timeSym] === 'function' &&
    typeof l[lsCacheSym] === 'object' &&
    typeof l[chindingsSym] === 'string' &&
    typeof l[endSym] === 'string' &&
    typeof l[messageKeySym] === 'string' &&
    typeof stream?.write === 'function' &&
    stream[needsMetadataGsym!] !== true &&
    !l[mixinSym] &&
    !hooks?.logMethod &&
    !hooks?.streamWrite &&
    !formatters?.log &&
    !l[nestedKeySym] &&
    !l[msgPrefixSym]
  );
}

/**
 * Writes `fields` and `message` at `level` exactly as `logger[level](fields, message)` would (the
 * logger's level text, time and bindings first, then the fields in their order, then the message),
 * but as one `JSON.stringify` of `fields` instead of pino's walk over them with its serializers and
 * redaction: half the cost of the request log's line. Only for fields that need neither (no
 * secrets, no errors, no values JSON cannot write); any other logger setup falls back to the pino
 * call. test/unit/log-line.test.ts compares both byte for byte.
 */
export function writeLine(logger: Logger, level: Level, fields: object, message: string): void {
  const l = logger as unknown as Internals;
  if (!plain(l)) {
    logger[level](fields, message);
    return;
  }
  const levelText = (l[lsCacheSym] as Record<number, string | undefined>)[LEVELS[level]];
  if (levelText === undefined) {
    logger[level](fields, message);
    return;
  }
  const body = JSON.stringify(fields);
  const line =
    levelText +
    (l[timeSym] as () => string)() +
    (l[chindingsSym] as string) +
    (body.length > 2 ? `,${body.slice(1, -1)}` : '') +
    `,"${l[messageKeySym] as string}":${JSON.stringify(message)}` +
    (l[endSym] as string);
  (l[streamSym] as Stream).write(line);
}
