import type { Duplex } from 'node:stream';
import type pg from 'pg';

/*
 * The fence around node-postgres's client internals (pg 8) that the silence watchdog reads: whether
 * a connection waits for an answer, its server process id, and its socket. The first two are not
 * in pg's typings. test/api/platform-pg.api.test.ts pins them, for a pooled and a pipelined
 * connection (docs/upgrading-libraries.md).
 */
type ClientInternals = pg.Client & { readyForQuery: boolean; processID: number | null };

/** Whether `client` has no query waiting for its answer. */
export function isReadyForQuery(client: pg.Client): boolean {
  return (client as ClientInternals).readyForQuery;
}

/** The id of the PostgreSQL server process behind `client` (pg_stat_activity.pid), once connected. */
export function serverProcessId(client: pg.Client): number | null {
  return (client as ClientInternals).processID;
}

/**
 * The socket under `client`: each answer arrives as its 'data', and destroying it with an error
 * fails the queries waiting on it with that error and ends the client.
 */
export function socketOf(client: pg.Client): Duplex {
  return client.connection.stream;
}
