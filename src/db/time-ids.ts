import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * Ids that carry their row's creation time (UUIDv7, RFC 9562: the first 48 bits are the Unix time
 * in milliseconds) for tables partitioned by month on `created_at`. A lookup by such an id adds the
 * millisecond it names as a bound on `created_at`, and PostgreSQL plans only that month's partition
 * instead of every month (docs/scaling.md, "Lookups by id", has the measurement). It holds because
 * the id is made from the very `created_at` the row is inserted with, and `created_at` never
 * changes. Ids of rows from before (random UUIDv4) carry no time: their lookups search every month.
 */
export function timeId(createdAt: Date): string {
  const bytes = randomSixteen();
  let ms = createdAt.getTime();
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Random bytes fetched 4 KiB at a time, as randomUUID does: a call per id was a few percent of an intake's CPU (`npm run bench -- calls` intake). */
let random = Buffer.alloc(0);
let used = 0;

/** 16 random bytes of their own (a view of the pool that is never handed out again). */
function randomSixteen(): Buffer {
  if (used + 16 > random.length) {
    random = randomBytes(4096);
    used = 0;
  }
  used += 16;
  return random.subarray(used - 16, used);
}

const TIME_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** The creation millisecond a timeId names; undefined for any other id. */
export function timeOfId(id: string): Date | undefined {
  if (!TIME_ID.test(id)) return undefined;
  return new Date(parseInt(id.slice(0, 8) + id.slice(9, 13), 16));
}

/**
 * `query.where(<column> = id)`, plus `created_at` within the millisecond a timeId names, so that
 * only its month's partition is planned and searched. `prefix` is the table's alias with its dot.
 */
export function whereId(query: Knex.QueryBuilder, id: string, prefix = ''): Knex.QueryBuilder {
  query.where(`${prefix}id`, id);
  const at = timeOfId(id);
  // Bounds as literal timestamps (not `$1 + interval`, which is not immutable): pruned at planning.
  if (at) query.where(`${prefix}created_at`, '>=', at).where(`${prefix}created_at`, '<', new Date(at.getTime() + 1));
  return query;
}
