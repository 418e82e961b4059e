import type { Knex } from 'knex';
import { isDatabaseUnavailable } from './pg-errors.js';
import { runStatementPrepared } from './prepared.js';
import { batchedStatement, oneStatement, STATEMENT_IN_BATCH, type Statement } from './statement.js';

type Waiting = { parts: readonly Statement[]; resolve: (rows: unknown[]) => void; reject: (error: unknown) => void };
/** The statements of one text waiting to be sent, and how many of its statements are in flight. */
type Lane = { sending: number; waiting: Waiting[] };

/**
 * One statement of a text in flight, and up to this many while a full one (16) waits behind them: on
 * a loaded machine each round trip also waits for the server and PostgreSQL to be scheduled, and one
 * at a time fell behind (`npm run bench -- calls` intake). Two in flight queue on the agent's counter
 * rows only until the first commits.
 */
const MOST_IN_FLIGHT = 4;
const FULL = 16;

/** Texts of batches by their statements' text and count, kept while they are few. */
const batchTexts = new Map<string, string>();
const BATCH_TEXTS_KEPT = 200;

/**
 * The text of `batch` (statements of one text) as one: made once per text and count (moving every
 * `$n` again was most of the JavaScript time of sending a batch); the values follow the statements.
 */
function batchOf(text: string, batch: readonly Waiting[]): Statement {
  const key = `${batch.length}\n${text}`;
  let batched = batchTexts.get(key);
  if (batched === undefined) {
    if (batchTexts.size >= BATCH_TEXTS_KEPT) batchTexts.clear();
    batched = batchedStatement(batch.map((w) => w.parts)).text;
    batchTexts.set(key, batched);
  }
  return { text: batched, values: batch.flatMap((w) => w.parts.flatMap((part) => part.values)) };
}

/**
 * How many go in one: a power of two up to 16, the most of the waiting ones. Each count is a
 * statement text of its own, which PostgreSQL keeps prepared on every pooled connection it ran on
 * (the intake's: about 0.5 MB alone, 2.7 MB for 16): a few counts, not every one up to the most, and
 * a stalled database makes a longer queue, not one huge statement. Those left wait for the next one.
 */
function countToSend(waiting: number): number {
  let count = 1;
  while (count * 2 <= Math.min(waiting, FULL)) count *= 2;
  return count;
}

/**
 * `oneStatement`s on the pool that many requests make at once (a call intake's insert with its
 * event, job and audit row), coalesced: while one of a text is in flight, the next ones of the same
 * text wait and then go together as one statement (`batchedStatement`). One round trip, one commit
 * and one run of each statement trigger for all of them, and far fewer statements waiting for
 * another's counter rows (their locks are held to the commit: concurrent single inserts of one agent
 * queued on them, `npm run bench -- calls` intake). An idle lane sends a statement at once, alone,
 * as `oneStatement` would: nothing waits that did not already have to.
 *
 * When a batch fails, each of its statements runs again alone: one that fails (a repeated call_id)
 * fails alone, with its own error, and the others are written as if they had never been together
 * (when the database is out of reach, all fail at once with its error, as each would have).
 * Each keeps every row of its own (its event, job and audit row): a batch only joins statements.
 */
export class StatementBatches {
  private readonly lanes = new WeakMap<object, Map<string, Lane>>();

  /** `label` names the prepared statements in PostgreSQL's views (`<label>` alone, `<label>_batch` together). */
  constructor(private readonly label: string) {}

  /** `oneStatement(parts[0], parts.slice(1))` on `db` (the pool), with others of the same text: gives its `first` rows. */
  run(db: Knex, parts: readonly Statement[]): Promise<unknown[]> {
    let lanes = this.lanes.get(db.client);
    if (!lanes) this.lanes.set(db.client, (lanes = new Map()));
    const text = parts.map((part) => part.text).join('\n');
    let lane = lanes.get(text);
    if (!lane) lanes.set(text, (lane = { sending: 0, waiting: [] }));
    const promise = new Promise<unknown[]>((resolve, reject) => lane.waiting.push({ parts, resolve, reject }));
    // Sent from the first request's asynchronous context, which the statements never read: each
    // waiting request goes on in its own once its promise settles.
    this.pump(db, lanes, text, lane);
    return promise;
  }

  /** Sends what may go now (see MOST_IN_FLIGHT); each answer sends again. */
  private pump(db: Knex, lanes: Map<string, Lane>, text: string, lane: Lane): void {
    while (
      lane.waiting.length > 0 &&
      (lane.sending === 0 || (lane.sending < MOST_IN_FLIGHT && lane.waiting.length >= FULL))
    ) {
      const batch = lane.waiting.splice(0, countToSend(lane.waiting.length));
      lane.sending += 1;
      void this.send(db, text, batch).then(() => {
        lane.sending -= 1;
        this.pump(db, lanes, text, lane);
      });
    }
    if (lane.sending === 0 && lane.waiting.length === 0) lanes.delete(text);
  }

  /** Never throws: every waiting statement's promise settles. */
  private async send(db: Knex, text: string, batch: Waiting[]): Promise<void> {
    if (batch.length > 1) {
      try {
        const { rows } = await runStatementPrepared(db, `${this.label}_batch`, batchOf(text, batch));
        const answers = batch.map((): unknown[] => []);
        for (const row of rows as Record<string, unknown>[]) {
          const at = row[STATEMENT_IN_BATCH] as number;
          delete row[STATEMENT_IN_BATCH];
          answers[at]!.push(row);
        }
        batch.forEach((w, i) => w.resolve(answers[i]!));
        return;
      } catch (error) {
        // A database out of reach fails each alone too: they are answered at once, not sent again.
        if (isDatabaseUnavailable(error)) {
          for (const w of batch) w.reject(error);
          return;
        }
        // Nothing of the batch was written: each alone below, failing with its own error if it does.
      }
    }
    await Promise.all(
      batch.map(async (w) => {
        try {
          const [first, ...others] = w.parts;
          const { rows } = await runStatementPrepared(db, this.label, oneStatement(first!, others));
          w.resolve(rows);
        } catch (error) {
          w.reject(error);
        }
      }),
    );
  }
}
