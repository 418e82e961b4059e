import { z } from '../../openapi/zod.js';
import { isValidTimeZone } from '../agents/zoned-time.js';
import { bound, callFilterShape, checkedRange } from './call.schemas.js';

export const STATS_INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type StatsInterval = (typeof STATS_INTERVALS)[number];

/** More buckets than this in one answer is a 400 (a year by hour is 8,784). */
export const STATS_MAX_BUCKETS = 10_000;
const SHORTEST_MS: Record<StatsInterval, number> = {
  hour: 3_600_000,
  day: 23 * 3_600_000,
  week: 7 * 23 * 3_600_000,
  month: 28 * 23 * 3_600_000,
};

/** Statistics: a required range, the bucket size and zone, an optional grouping, and the list's filters. */
export const CallStatsQuery = z
  .object({
    from: bound,
    to: bound,
    interval: z.enum(STATS_INTERVALS, { message: `Must be one of: ${STATS_INTERVALS.join(', ')}` }).default('day'),
    tz: z.string().refine(isValidTimeZone, 'Must be an IANA time zone such as Europe/Berlin').optional(),
    group_by: z.string().optional(),
    done: callFilterShape.done,
    phone_number: callFilterShape.phone_number,
    search: callFilterShape.search,
    include_deleted: callFilterShape.include_deleted,
  })
  .superRefine((q, ctx) => {
    const range = checkedRange(q, ctx);
    if (range && (range.before.getTime() - range.from.getTime()) / SHORTEST_MS[q.interval] > STATS_MAX_BUCKETS - 2) {
      ctx.addIssue({
        code: 'custom',
        path: ['interval'],
        message: `Too many buckets for this range (at most ${STATS_MAX_BUCKETS}); choose a longer interval`,
      });
    }
  });

const figures = {
  count: z.number().int(),
  done: z.number().int().openapi({ description: 'Calls marked done' }),
  duration_total: z.number().openapi({ description: 'Seconds' }),
  duration_avg: z.number().nullable().openapi({ description: 'Seconds; null without calls' }),
};

export const CallStatsBucketSchema = z
  .object({
    start: z.iso.datetime().openapi({ description: 'Start of the bucket (in tz), as an instant' }),
    ...figures,
    groups: z
      .record(z.string(), z.number().int())
      .optional()
      .openapi({ description: 'With group_by: calls per value ("none" for calls without one)' }),
  })
  .openapi('CallStatsBucket');

export const CallStatsSchema = z
  .object({
    interval: z.enum(STATS_INTERVALS),
    tz: z.string(),
    from: z.iso.datetime().openapi({ description: 'First instant counted' }),
    to: z.iso.datetime().openapi({ description: 'End of the range, exclusive' }),
    group_by: z.string().nullable(),
    totals: z.object(figures),
    buckets: z.array(CallStatsBucketSchema).openapi({ description: 'In order, empty ones included' }),
  })
  .openapi('CallStats');

export type CallStats = z.output<typeof CallStatsSchema>;
export type CallStatsBucket = z.output<typeof CallStatsBucketSchema>;
