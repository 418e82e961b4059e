import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { Logger } from 'pino';
import { isReadyForQuery, serverProcessId, socketOf } from '../platform/pg.js';

/**
 * Finds pooled connections whose query gets no answer and cuts them, so that a database that went
 * silent (packets dropped: no refusal, no reset) costs a request seconds instead of hanging it until
 * the network comes back, and the pool drops the connection instead of handing it out again.
 *
 * Silence alone is not proof: a query may run for long, or wait on a lock, without a byte coming
 * back. So when a connection has been waiting `silenceMs` without hearing anything, a fresh
 * connection asks PostgreSQL what that connection's server process is doing:
 * - no answer within the probe deadline: the database cannot be reached; the silent connections are
 *   cut, and the idle ones not heard from since the probe began (before a request finds them dead);
 *   a query sent only just now gets its own check. A database that sent the probe anything (its
 *   greeting) is reachable, only slow: on a machine too busy to open a connection in time the
 *   silent connections are left alone and looked at again, as below;
 * - the process is idle (it answered, or never got the query) or blocked sending to us: the answer
 *   was lost on the way; that connection is cut;
 * - the process is still working, or cannot be seen (behind a pooler the ids differ): it is left
 *   alone and looked at again after another `silenceMs`.
 * A cut query fails with code ETIMEDOUT, which the error handler answers with 503. After a lost
 * answer, the idle connections last heard from before it are replaced as well.
 *
 * Limit: a query read in portions (a cursor, a stream) whose reader pauses for longer than
 * `silenceMs` looks lost to this rule (its server process waits, idle in transaction); the service
 * reads no results that way.
 */

type Entry = {
  client: pg.Client;
  /** When a byte last arrived on the connection. */
  heardAt: number;
  /** When the watchdog first saw the connection waiting for an answer (undefined: not waiting). */
  waitingSince?: number;
  /** A probe about this connection is in flight. */
  probing?: boolean;
};

/** At most this many probes at once, so that a silent database does not gather half-open probes. */
const MAX_PROBES = 4;

/** pg_stat_activity states in which a server process owes us nothing: our query is lost. */
const DONE_STATES = new Set(['idle', 'idle in transaction', 'idle in transaction (aborted)']);

export type SilenceWatchdogOptions = {
  /** Where the probe connects: the pool's own URL. */
  url: string;
  /** How long a query may go without a byte back before the probe looks; 0 turns the watchdog off. */
  silenceMs: number;
  logger?: Logger;
};

export class SilenceWatchdog {
  private readonly entries = new Set<Entry>();
  private readonly probeMs: number;
  private readonly tickMs: number;
  private timer: NodeJS.Timeout | undefined;
  /** Probes in flight (each for the connections found silent at one tick). */
  private probes = 0;
  /** Connections cut since the start, for tests and logs. */
  cut = 0;

  constructor(private readonly options: SilenceWatchdogOptions) {
    // Long enough that a busy machine still opens a local connection in time (a false "unreachable"
    // would cut every connection), short enough that silence + probe stays well under 5 s.
    this.probeMs = Math.max(250, Math.round(options.silenceMs * 0.75));
    this.tickMs = Math.max(50, Math.min(250, Math.round(options.silenceMs / 4)));
  }

  /** Watches a connected client until it ends. */
  watch(client: pg.Client): void {
    if (this.options.silenceMs <= 0) return;
    const entry: Entry = { client, heardAt: performance.now() };
    socketOf(client).on('data', () => {
      entry.heardAt = performance.now();
    });
    client.once('end', () => this.forget(entry));
    this.entries.add(entry);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.tickMs);
      this.timer.unref();
    }
  }

  private forget(entry: Entry): void {
    this.entries.delete(entry);
    if (this.entries.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private tick(): void {
    const now = performance.now();
    for (const entry of this.entries) {
      if (isReadyForQuery(entry.client)) entry.waitingSince = undefined;
      else entry.waitingSince ??= now;
    }
    // A connection found silent while another probe is out gets a probe of its own, so that its
    // wait is bounded by silenceMs + one probe, not by the probes before it.
    const silent = [...this.entries].filter((e) => !e.probing && this.isSilent(e, now));
    if (silent.length === 0 || this.probes >= MAX_PROBES) return;
    this.check(silent).catch((error: unknown) =>
      this.options.logger?.error({ err: error }, 'database watchdog failed'),
    );
  }

  private isSilent(entry: Entry, now: number): boolean {
    return (
      !isReadyForQuery(entry.client) &&
      entry.waitingSince !== undefined &&
      now - Math.max(entry.waitingSince, entry.heardAt) >= this.options.silenceMs
    );
  }

  private async check(silent: Entry[]): Promise<void> {
    this.probes += 1;
    for (const entry of silent) entry.probing = true;
    const startedAt = performance.now();
    try {
      const pids = silent.map((e) => serverProcessId(e.client)).filter((pid): pid is number => typeof pid === 'number');
      const states = await this.probe(pids);
      if (states === 'unreachable') {
        // The silent queries, and the idle connections not heard from since. A query sent only
        // just now is left to its own check: should this verdict be wrong (a machine too busy to
        // open a connection in time), it costs reconnects, not the answers of healthy queries.
        const now = performance.now();
        const lost = [...this.entries].filter(
          (e) => e.heardAt < startedAt && (isReadyForQuery(e.client) || this.isSilent(e, now)),
        );
        for (const entry of lost) this.cutOff(entry);
        this.options.logger?.warn(
          { connections: lost.length, silence_ms: this.options.silenceMs },
          'database gives no answer; its connections were dropped',
        );
        return;
      }
      let lost = 0;
      let lostSince = Infinity;
      for (const entry of silent) {
        // Answered meanwhile, or gone: nothing to do.
        if (!this.entries.has(entry) || isReadyForQuery(entry.client) || entry.heardAt >= startedAt) continue;
        const state = states.get(serverProcessId(entry.client) ?? -1);
        if (state && (DONE_STATES.has(state.state ?? '') || state.waitEvent === 'ClientWrite')) {
          lostSince = Math.min(lostSince, Math.max(entry.heardAt, entry.waitingSince ?? entry.heardAt));
          this.cutOff(entry);
          lost += 1;
        } else {
          // Still working (or not visible): look again after another silence.
          entry.waitingSince = performance.now();
        }
      }
      if (lost === 0) return;
      // What lost these answers (a NAT or firewall that forgot the connections) most likely took the
      // idle connections last heard from before then too: replace them before a request finds out.
      const suspects = [...this.entries].filter((e) => isReadyForQuery(e.client) && e.heardAt < lostSince);
      for (const entry of suspects) this.cutOff(entry);
      this.options.logger?.warn(
        { connections: lost, idle_replaced: suspects.length },
        'database answers lost on their connections; connections dropped',
      );
    } finally {
      this.probes -= 1;
      for (const entry of silent) entry.probing = false;
    }
  }

  /** The server's view of `pids`, or 'unreachable' when a new connection gets no answer in time. */
  private async probe(
    pids: number[],
  ): Promise<Map<number, { state: string | null; waitEvent: string | null }> | 'unreachable'> {
    const url = new URL(this.options.url);
    const base = url.searchParams.get('application_name');
    url.searchParams.set('application_name', base ? `${base}/watchdog` : 'vam-watchdog');
    const client = new pg.Client({
      connectionString: url.toString(),
      connectionTimeoutMillis: this.probeMs,
    });
    client.on('error', () => {});
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'unreachable'>((resolve) => {
      timer = setTimeout(() => resolve('unreachable'), this.probeMs);
    });
    const ask = async () => {
      await client.connect();
      const { rows } = await client.query<{ pid: number; state: string | null; wait_event: string | null }>(
        'SELECT pid, state, wait_event FROM pg_stat_activity WHERE pid = ANY($1::int[])',
        [pids],
      );
      return new Map(rows.map((r) => [r.pid, { state: r.state, waitEvent: r.wait_event }]));
    };
    const stream = socketOf(client);
    let heard = false;
    stream.once('data', () => (heard = true));
    let answered = false;
    try {
      const result = await Promise.race([
        ask().catch((error: unknown) => {
          // The server answered with an error (too many clients, ...): reachable, but nothing learnt.
          if (error instanceof pg.DatabaseError) return new Map();
          return 'unreachable' as const;
        }),
        deadline,
      ]);
      answered = result !== 'unreachable';
      // Not answered in time, but the server spoke: reachable and slow, nothing learnt.
      if (!answered && heard) return new Map();
      return result;
    } finally {
      clearTimeout(timer);
      if (answered) {
        // A polite goodbye when the server is there; cut if even that gets stuck.
        setTimeout(() => stream.destroy(), this.probeMs).unref();
        client.end().catch(() => {});
      } else {
        stream.destroy();
      }
    }
  }

  private cutOff(entry: Entry): void {
    if (!this.entries.has(entry)) return;
    this.forget(entry);
    this.cut += 1;
    const error = Object.assign(
      new Error(`Connection dropped: no answer from the database for ${this.options.silenceMs} ms`),
      { code: 'ETIMEDOUT' },
    );
    socketOf(entry.client).destroy(error);
  }
}
