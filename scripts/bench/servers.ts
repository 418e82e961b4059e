/**
 * The comparison servers of the chain scenario, run as child processes:
 * - `baseline`: Express 5 and one primary-key read of the agent (what the product's cached path
 *   should approach, and the uncached path's reference);
 * - `floor`: Express 5 answering a fixed JSON body, no database (the framework itself).
 */
import express from 'express';
import { createDb } from '../../src/db/knex.js';

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
  const body = { id: '00000000-0000-4000-8000-000000000000', name: 'Floor', status: 'ok' };
  app.get('/v1/agents/:agentId', (_req, res) => {
    res.json(body);
  });
}
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
