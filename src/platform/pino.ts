import { pino, type Level, type Logger } from 'pino';

/*
 * The fence around pino's private fields (pino 10): a logger's level texts, time function,
 * bindings, message key, line end and stream behind the symbols of `pino.symbols`, which pino
 * exports but does not document. test/unit/platform-pino.test.ts pins them: the product's logger is
 * judged plain (the fast line is taken) and that line is pino's own, byte for byte
 * (docs/upgrading-libraries.md).
 */

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
} = pino.symbols;
/** Not in pino's types, but set by `child({}, { msgPrefix })`. */
const msgPrefixSym = Reflect.get(pino.symbols, 'msgPrefixSym') as symbol | undefined;

const LEVELS: Record<Level, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

type Stream = { write(line: string): unknown };

/** One of pino's fields of a logger (or of its stream), by its symbol. */
function field(of: object, key: symbol | undefined): unknown {
  return key === undefined ? undefined : Reflect.get(of, key);
}

/**
 * Whether `logger` writes a line as the plain sum of its parts: no mixin, no log-method or
 * stream-write hook, no log formatter, no nested key, no message prefix, a stream that takes a
 * string and needs no metadata (not a multistream). The product's logger (src/logger.ts) does.
 */
export function writesPlainLines(logger: Logger): boolean {
  const stream = field(logger, streamSym) as Partial<Stream> | undefined;
  const hooks = field(logger, hooksSym) as { logMethod?: unknown; streamWrite?: unknown } | undefined;
  const formatters = field(logger, formattersSym) as { log?: unknown } | undefined;
  return (
    typeof field(logger, timeSym) === 'function' &&
    typeof field(logger, lsCacheSym) === 'object' &&
    typeof field(logger, chindingsSym) === 'string' &&
    typeof field(logger, endSym) === 'string' &&
    typeof field(logger, messageKeySym) === 'string' &&
    stream !== undefined &&
    typeof stream.write === 'function' &&
    field(stream, needsMetadataGsym) !== true &&
    !field(logger, mixinSym) &&
    !hooks?.logMethod &&
    !hooks?.streamWrite &&
    !formatters?.log &&
    !field(logger, nestedKeySym) &&
    !field(logger, msgPrefixSym)
  );
}

/** `writesPlainLines(logger)`, judged once per logger: its setup does not change after it is made. */
const plainLoggers = new WeakMap<Logger, boolean>();

/**
 * Writes `fields` and `message` at `level` exactly as `logger[level](fields, message)` would (the
 * logger's level text, time and bindings first, then the fields in their order, then the message),
 * but as one `JSON.stringify` of `fields` instead of pino's walk over them with its serializers and
 * redaction: half the cost of the request log's line. Only for fields that need neither (no
 * secrets, no errors, no values JSON cannot write); any other logger setup falls back to the pino
 * call. test/unit/platform-pino.test.ts compares both byte for byte.
 */
export function writeLine(logger: Logger, level: Level, fields: object, message: string): void {
  let isPlain = plainLoggers.get(logger);
  if (isPlain === undefined) plainLoggers.set(logger, (isPlain = writesPlainLines(logger)));
  const levelText = isPlain
    ? (field(logger, lsCacheSym) as Record<number, string | undefined>)[LEVELS[level]]
    : undefined;
  if (levelText === undefined) {
    logger[level](fields, message);
    return;
  }
  const body = JSON.stringify(fields);
  const line =
    levelText +
    (field(logger, timeSym) as () => string).call(logger) +
    (field(logger, chindingsSym) as string) +
    (body.length > 2 ? `,${body.slice(1, -1)}` : '') +
    `,"${field(logger, messageKeySym) as string}":${JSON.stringify(message)}` +
    (field(logger, endSym) as string);
  (field(logger, streamSym) as Stream).write(line);
}
