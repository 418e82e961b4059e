import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';

/** Control messages on the cache channel start with this; they never empty a cache. */
const PREFIX = 'vamc:';

type Send = (payload: string) => Promise<unknown>;
/** The longest a stopping instance waits for its goodbye to be sent. */
const LEAVE_MS = 500;

/**
 * Makes a credential or agent change refused by every instance once the API has answered the write.
 *
 * Each instance announces itself on the cache channel every `leaseMs / 4` (a ping) and serves from
 * its cache only while it has received one of its own pings sent less than `leaseMs` ago. PostgreSQL
 * delivers notifications to each listener in commit order, so an instance that has received a ping
 * sent after a change has also received (and applied) the change's announcement before it.
 *
 * After a change commits, the writing instance sends a round marker and waits until every instance
 * it has heard from recently acknowledges it (an acknowledgement means that instance has applied the
 * change), or until `leaseMs` has passed since the marker. Either way, when the write answers:
 * - an instance that acknowledged has emptied its cache;
 * - one that did not has received none of its pings sent after the change, so its newest received
 *   ping is older than `leaseMs` and it reads from the database (the cache is bypassed).
 * A stuck or killed instance therefore costs a write at most `leaseMs`, never correctness.
 */
export class CachePeers {
  readonly instanceId = randomUUID();
  private readonly lastHeard = new Map<string, number>();
  private readonly pendingPings = new Map<string, number>();
  private readonly rounds = new Map<
    string,
    { acked: Set<string>; changed: () => void; own: () => void; sentAt: number }
  >();
  private ownPingSentAt = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  private send: Send | undefined;

  constructor(
    private readonly leaseMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Begins pinging through `send` (a NOTIFY on the cache channel of the listening connection). */
  start(send: Send): void {
    this.stop();
    this.send = send;
    const ping = () => {
      const id = randomUUID();
      this.pendingPings.set(id, this.now());
      if (this.pendingPings.size > 100) this.pendingPings.delete(this.pendingPings.keys().next().value!);
      send(`${PREFIX}ping:${this.instanceId}:${id}`).catch(() => {});
    };
    ping();
    this.timer = setInterval(ping, Math.max(10, Math.floor(this.leaseMs / 4)));
    this.timer.unref();
  }

  /**
   * A graceful stop, after this instance stopped serving from its cache: tells the others not to
   * wait for its acknowledgements (they would otherwise wait out a lease per change for two leases).
   * Bounded by `LEAVE_MS`, since a stalled connection would never answer; then stops.
   */
  async leave(): Promise<void> {
    const send = this.send;
    this.stop();
    if (!send) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      send(`${PREFIX}bye:${this.instanceId}`).catch(() => {}),
      new Promise((resolve) => (timer = setTimeout(resolve, LEAVE_MS))),
    ]);
    clearTimeout(timer);
  }

  /** The listener is gone: no lease until it is back. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.send = undefined;
    this.ownPingSentAt = -Infinity;
    this.pendingPings.clear();
  }

  /** Whether this instance may serve from its cache now. */
  fresh(): boolean {
    return this.now() - this.ownPingSentAt < this.leaseMs;
  }

  /** Handles a control message; false for anything else (a change announcement). */
  handle(payload: string | undefined): boolean {
    if (!payload?.startsWith(PREFIX)) return false;
    const [kind, a, b] = payload.slice(PREFIX.length).split(':');
    if (kind === 'ping' && a && b) {
      this.lastHeard.set(a, this.now());
      const sentAt = a === this.instanceId ? this.pendingPings.get(b) : undefined;
      if (sentAt !== undefined) {
        this.pendingPings.delete(b);
        this.ownPingSentAt = Math.max(this.ownPingSentAt, sentAt);
      }
    } else if (kind === 'round' && a && b) {
      this.lastHeard.set(a, this.now());
      const round = a === this.instanceId ? this.rounds.get(b) : undefined;
      if (round) {
        // Our own marker back is as good as a ping sent when the round began.
        this.ownPingSentAt = Math.max(this.ownPingSentAt, round.sentAt);
        round.own();
      } else if (a === this.instanceId) return true;
      else this.send?.(`${PREFIX}ack:${b}:${this.instanceId}`).catch(() => {});
    } else if (kind === 'bye' && a) {
      this.lastHeard.delete(a);
      for (const round of this.rounds.values()) round.changed();
    } else if (kind === 'ack' && a && b) {
      const round = this.rounds.get(a);
      if (round) {
        round.acked.add(b);
        round.changed();
      }
    }
    return true;
  }

  /**
   * Call after a change has committed: resolves when every recently heard instance has applied it,
   * or `leaseMs` after the round began (instances that did not answer no longer use their caches).
   * Returns what happened, for logs and the cluster test.
   */
  async awaitPeers(): Promise<{ peers: number; acknowledged: number; waitedMs: number }> {
    const send = this.send;
    if (!send) {
      // Not listening: others cannot be asked, so wait until any that missed the change stopped using it.
      await new Promise((resolve) => setTimeout(resolve, this.leaseMs));
      return { peers: 0, acknowledged: 0, waitedMs: this.leaseMs };
    }
    const id = randomUUID();
    const started = this.now();
    let wake = () => {};
    let ownReceived = false;
    const round = {
      sentAt: started,
      acked: new Set<string>(),
      changed: () => wake(),
      own: () => {
        ownReceived = true;
        wake();
      },
    };
    this.rounds.set(id, round);
    try {
      await send(`${PREFIX}round:${this.instanceId}:${id}`);
      let peers: string[] = [];
      for (;;) {
        const elapsed = this.now() - started;
        // Peers are counted once our own marker is back: every ping committed before it has arrived.
        if (ownReceived) {
          peers = this.livePeers();
          if (peers.every((peer) => round.acked.has(peer))) break;
        }
        if (elapsed >= this.leaseMs) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.max(1, this.leaseMs - elapsed)).unref();
        });
      }
      const acknowledged = peers.filter((peer) => round.acked.has(peer)).length;
      return { peers: peers.length, acknowledged, waitedMs: this.now() - started };
    } finally {
      this.rounds.delete(id);
    }
  }

  /** Instances heard from within two leases, except this one. */
  private livePeers(): string[] {
    const since = this.now() - 2 * this.leaseMs;
    const live: string[] = [];
    for (const [id, at] of this.lastHeard) {
      if (at < since) this.lastHeard.delete(id);
      else if (id !== this.instanceId) live.push(id);
    }
    return live;
  }
}
