import knex from 'knex';
import { seededCalls } from './bench/calls-seed.js';
const db = knex({ client: 'pg', connection: process.env.DATABASE_URL });
const seed = await seededCalls(db, Number(process.env.TOTAL ?? 10_000_000));
console.log(JSON.stringify({ key: seed.big.key, agentId: seed.big.agentId }));
await db.destroy();
