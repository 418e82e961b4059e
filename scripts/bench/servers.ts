/**
 * The comparison servers of the chain scenario, run as child processes:
 * - `baseline`: Express 5 and one primary-key read of the agent (what the product's cached path
 *   should approach, and the uncached path's reference);
 * - `floor`: Express 5 answering the same agent document as the product from memory (read once per
 *   id, then no database): the framework itself, with the same response to serialise and send.
 * A second argument `product-server` serves the app on the product's HTTP server
 * (src/http/http-server.ts) instead of `app.listen`, so the two ways of serving Express compare.
 */
import express from 'express';
import { createDb } from '../../src/db/knex.js';
import { createHttpServer } from '../../src/http/http-server.js';
import { AgentReads, type AgentRow } from '../../src/modules/agents/agent-reads.js';

const kind = process.argv[2];
const app = express();
app.get('/v1/health', (_req, res) => {
  res.json({ status: 'ok' });
});
if (kind === 'baseline') {
  const db = createDb(process.env.DATABASE_URL!, 10);
  app.get('/v1/agents/:agentId', async (req, res) => {
    const agent = await db('agents').where({ id: req.params.agentId }).first();
    if (!agent) res.status(404).end();
    else res.json(agent);
  });
} else {
  const db = createDb(process.env.DATABASE_URL!, 1);
  const documents = new Map<string, object>();
  app.get('/v1/agents/:agentId', (req, res, next) => {
    const id = req.params.agentId;
    const known = documents.get(id);
    if (known) {
      res.json(known);
      return;
    }
    db('agents')
      .where({ id })
      .first()
      .then((row: AgentRow | undefined) => {
        if (!row) return void res.status(404).end();
        documents.set(id, AgentReads.representation(row));
        res.json(documents.get(id));
      }, next);
  });
}
const server =
  process.argv[3] === 'product-server'
    ? createHttpServer(app).listen(Number(process.env.PORT), '127.0.0.1')
    : app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
