import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CachePeers } from '../../src/cache/cache-peers.js';

const LEASE = 1000;

/**
 * A notification channel like PostgreSQL's: every message goes to every connected listener, in the
 * order sent. `hold` stops delivery to one listener (a stalled connection) until released.
 */
function channel() {
  const listeners = new Map<CachePeers, { held: boolean; backlog: string[] }>();
  const deliver = (peer: CachePeers, payload: string) => {
    const state = listeners.get(peer)!;
    if (state.held) state.backlog.push(payload);
    else peer.handle(payload);
  };
  return {
    connect(peer: CachePeers) {
      listeners.set(peer, { held: false, backlog: [] });
      peer.start(async (payload) => {
        await Promise.resolve();
        for (const listener of listeners.keys()) deliver(listener, payload);
      });
    },
    hold(peer: CachePeers) {
      listeners.get(peer)!.held = true;
    },
    release(peer: CachePeers) {
      const state = listeners.get(peer)!;
      state.held = false;
      for (const payload of state.backlog.splice(0)) peer.handle(payload);
    },
    disconnect(peer: CachePeers) {
      listeners.delete(peer);
    },
  };
}

const newPeer = () => new CachePeers(LEASE, () => Date.now());

/** A channel and `count` peers on it, each past its first heartbeat. */
async function onChannel(count: number) {
  const bus = channel();
  const peers = Array.from({ length: count }, () => newPeer());
  for (const peer of peers) bus.connect(peer);
  await vi.advanceTimersByTimeAsync(0);
  return { bus, peers };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('CachePeers', () => {
  it('serves from the cache only once its own heartbeat came back, and only within the lease', async () => {
    const bus = channel();
    const a = newPeer();
    expect(a.fresh()).toBe(false);
    bus.connect(a);
    await vi.advanceTimersByTimeAsync(0);
    expect(a.fresh()).toBe(true);
    // The heartbeats stop coming back (stalled connection): the lease runs out.
    bus.hold(a);
    await vi.advanceTimersByTimeAsync(LEASE + 1);
    expect(a.fresh()).toBe(false);
    bus.release(a);
    await vi.advanceTimersByTimeAsync(LEASE / 4);
    expect(a.fresh()).toBe(true);
    a.stop();
  });

  it('answers a change once every live peer has acknowledged it, without waiting for the lease', async () => {
    const {
      peers: [a, b, c],
    } = await onChannel(3);
    const started = Date.now();
    const round = a.awaitPeers();
    await vi.advanceTimersByTimeAsync(0);
    expect(await round).toMatchObject({ peers: 2, acknowledged: 2 });
    expect(Date.now() - started).toBeLessThan(LEASE);
    for (const peer of [a, b, c]) peer.stop();
  });

  it('waits at most one lease for a peer that does not answer, which by then no longer uses its cache', async () => {
    const {
      bus,
      peers: [a, b],
    } = await onChannel(2);
    bus.hold(b);
    const started = Date.now();
    let result: Awaited<ReturnType<CachePeers['awaitPeers']>> | undefined;
    void a.awaitPeers().then((r) => (result = r));
    await vi.advanceTimersByTimeAsync(LEASE - 1);
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(result).toMatchObject({ peers: 1, acknowledged: 0 });
    expect(Date.now() - started).toBe(LEASE);
    // The peer that missed the change has not served from its cache since before the write answered.
    expect(b.fresh()).toBe(false);
    a.stop();
    b.stop();
  });

  it('does not wait for a peer silent for two leases (killed)', async () => {
    const {
      bus,
      peers: [a, b],
    } = await onChannel(2);
    b.stop();
    bus.disconnect(b);
    await vi.advanceTimersByTimeAsync(2 * LEASE + 1);
    const round = a.awaitPeers();
    await vi.advanceTimersByTimeAsync(0);
    expect(await round).toMatchObject({ peers: 0, acknowledged: 0 });
    a.stop();
  });

  it('does not wait for a peer that said goodbye (a graceful stop)', async () => {
    const {
      bus,
      peers: [a, b],
    } = await onChannel(2);
    const started = Date.now();
    const leaving = b.leave();
    await vi.advanceTimersByTimeAsync(0);
    await leaving;
    bus.disconnect(b);
    const round = a.awaitPeers();
    await vi.advanceTimersByTimeAsync(0);
    expect(await round).toMatchObject({ peers: 0, acknowledged: 0 });
    expect(Date.now() - started).toBeLessThan(LEASE);
    expect(b.fresh()).toBe(false);
    a.stop();
  });

  it('stops waiting for a peer that says goodbye during a round', async () => {
    const {
      bus,
      peers: [a, b],
    } = await onChannel(2);
    bus.hold(b); // b misses the round marker, so it cannot acknowledge it
    let result: Awaited<ReturnType<CachePeers['awaitPeers']>> | undefined;
    void a.awaitPeers().then((r) => (result = r));
    await vi.advanceTimersByTimeAsync(LEASE / 2);
    expect(result).toBeUndefined();
    await b.leave();
    await vi.advanceTimersByTimeAsync(0);
    expect(result).toMatchObject({ peers: 0, acknowledged: 0 });
    expect(result!.waitedMs).toBeLessThan(LEASE);
    a.stop();
  });

  it('treats only its own messages as control messages', () => {
    const a = newPeer();
    expect(a.handle('api_keys')).toBe(false);
    expect(a.handle(undefined)).toBe(false);
    expect(a.handle('vamc:ping:x:y')).toBe(true);
  });
});
