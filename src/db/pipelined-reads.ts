import pg from 'pg';

/**
 * Short reads that many requests make at once (the key lookups of every request the read cache does
 * not answer), sent over a few connections of their own in pg's pipeline mode: each query goes out
 * as soon as it is made, without waiting for the one before it to be answered, and without taking a
 * connection from the pool and giving it back. PostgreSQL answers them in order; a server process
 * that finds the next query already waiting goes on without sleeping. It carries more requests than
 * the pool at less CPU per request (`npm run bench -- chain`, without the read cache).
 *
 * Only for statements that answer in well under a millisecond (one indexed row): a query waits for
 * every query sent before it on its connection. A query goes to the connection with the fewest
 * unanswered queries. A connection is opened on first use and replaced after it fails or ends; the
 * queries it had unanswered fail with the driver's connection error (503 to the client), as on a
 * pooled connection. `onConnect` sees each new connection (the silence watchdog watches it).
 */
export class PipelinedReads {
  private readonly lanes: Lane[];
  private closed = false;

  constructor(
    private readonly settings: pg.ClientConfig,
    size: number,
    private readonly onConnect: (client: pg.Client) => void = () => {},
  ) {
    this.lanes = Array.from({ length: size }, () => ({ waiting: 0, ready: undefined }));
  }

  async query(config: pg.QueryConfig): Promise<pg.QueryResult> {
    // The message of a closed pg client, which the error handler knows as "unavailable".
    if (this.closed) throw new Error('Client was closed and is not queryable');
    let lane = this.lanes[0]!;
    for (const other of this.lanes) if (other.waiting < lane.waiting) lane = other;
    lane.waiting += 1;
    try {
      const client = await (lane.ready ?? this.connect(lane));
      return await client.query(config);
    } finally {
      lane.waiting -= 1;
    }
  }

  private connect(lane: Lane): Promise<pg.Client> {
    const client = new pg.Client({ ...this.settings, pipeline: true } as pg.ClientConfig);
    const drop = () => {
      if (lane.client === client) {
        lane.ready = undefined;
        lane.client = undefined;
      }
    };
    // A lost connection emits 'error' (without a listener it would end the process), then 'end'.
    client.on('error', drop);
    client.on('end', drop);
    lane.client = client;
    lane.ready = client.connect().then(
      () => {
        this.onConnect(client);
        return client;
      },
      (error: unknown) => {
        drop();
        client.end().catch(() => {});
        throw error;
      },
    );
    return lane.ready;
  }

  /** Ends every connection; queries after this fail at once. */
  async close(): Promise<void> {
    this.closed = true;
    const clients = this.lanes.flatMap((lane) => (lane.client ? [lane.client] : []));
    for (const lane of this.lanes) {
      lane.ready = undefined;
      lane.client = undefined;
    }
    await Promise.all(
      clients.map(async (client) => {
        try {
          await client.end();
        } catch {
          // Already broken: nothing left to end.
        }
      }),
    );
  }
}

type Lane = {
  /** Queries sent or about to be sent on this lane and not yet answered. */
  waiting: number;
  ready: Promise<pg.Client> | undefined;
  client?: pg.Client;
};
