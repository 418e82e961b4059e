import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/knex.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

/**
 * Concurrent writes on one agent that touch the same rows. Each pair is fired at once for several
 * rounds; no response may be 5xx, each status must be one the endpoint documents for the outcome,
 * and the rows afterwards must be consistent (one payload, never a mix; no dangling reference).
 */
let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const ROUNDS = 8;
const agentPath = (agentId: string) => `/v1/agents/${agentId}`;
const step = (id: string, next: string[], tools: string[] = []) => ({
  id,
  name: `Step ${id}`,
  description: `Do ${id}`,
  completion: `${id} done`,
  next: next.map((n) => ({ id: n })),
  tools,
});
const workflowNaming = (tool: string) => ({
  name: 'Intake',
  steps: [step('start', ['end'], [tool]), step('end', [])],
});

async function createTool(agentId: string, name: string, extra: Record<string, unknown> = {}) {
  const res = await ctx.http
    .post(`${agentPath(agentId)}/tools`)
    .set('X-API-Key', w.key)
    .send({ name, tool_type: 'end_call', description: 'A test tool', config: {}, ...extra });
  expect(res.status).toBe(201);
  return res.body.id as string;
}
const toolNames = async (agentId: string) =>
  (await ctx.db('tools').where({ agent_id: agentId }).select('name')).map((t) => t.name as string);
const storedWorkflow = async (agentId: string) =>
  (await ctx.db('agents').where({ id: agentId }).first('workflow')).workflow as {
    steps: { tools: string[] }[];
  } | null;
const namedInWorkflow = (workflow: { steps: { tools: string[] }[] } | null) =>
  new Set((workflow?.steps ?? []).flatMap((s) => s.tools));

function expectNo5xx(...responses: { status: number; body: unknown }[]) {
  for (const res of responses) expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
}

describe('workflow PUT against tool writes', () => {
  it('workflow PUT vs tool DELETE: no 5xx, and the workflow never names a deleted tool', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    for (let round = 0; round < ROUNDS; round++) {
      await ctx.http
        .put(`${agentPath(agentId)}/workflow`)
        .set('X-API-Key', w.key)
        .send({ workflow: null });
      const toolId = await createTool(agentId, `tool_${round}`);
      const [put, del] = await Promise.all([
        ctx.http
          .put(`${agentPath(agentId)}/workflow`)
          .set('X-API-Key', w.key)
          .send(workflowNaming(`tool_${round}`)),
        ctx.http.delete(`${agentPath(agentId)}/tools/${toolId}`).set('X-API-Key', w.key),
      ]);
      expectNo5xx(put, del);
      expect([200, 400]).toContain(put.status);
      expect([204, 409]).toContain(del.status);
      // Exactly one of them won.
      expect(put.status === 200).toBe(del.status === 409);
      const names = new Set(await toolNames(agentId));
      for (const named of namedInWorkflow(await storedWorkflow(agentId))) expect(names.has(named)).toBe(true);
    }
  });

  it('workflow PUT vs tool PATCH (rename): no 5xx, and every tool the workflow names exists', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    for (let round = 0; round < ROUNDS; round++) {
      await ctx.http
        .put(`${agentPath(agentId)}/workflow`)
        .set('X-API-Key', w.key)
        .send({ workflow: null });
      const toolId = await createTool(agentId, `old_${round}`);
      const [put, patch] = await Promise.all([
        ctx.http
          .put(`${agentPath(agentId)}/workflow`)
          .set('X-API-Key', w.key)
          .send(workflowNaming(`old_${round}`)),
        ctx.http
          .patch(`${agentPath(agentId)}/tools/${toolId}`)
          .set('X-API-Key', w.key)
          .send({ name: `new_${round}` }),
      ]);
      expectNo5xx(put, patch);
      expect([200, 400]).toContain(put.status);
      expect([200, 409]).toContain(patch.status);
      expect(put.status === 200).toBe(patch.status === 409);
      const names = new Set(await toolNames(agentId));
      for (const named of namedInWorkflow(await storedWorkflow(agentId))) expect(names.has(named)).toBe(true);
    }
  });
});

describe('forwarding slots', () => {
  const slotsInDb = async (agentId: string) =>
    ctx.db('forwarding_slots').where({ agent_id: agentId }).orderBy('slotnummer').select('slotnummer', 'cases');

  it('slot PUT vs slot DELETE: no 5xx, and the slots are exactly the PUT payload', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    for (let round = 0; round < ROUNDS; round++) {
      const created = await ctx.http
        .post(`${agentPath(agentId)}/forwarding-slots`)
        .set('X-API-Key', w.key)
        .send({ slotnummer: '50', cases: `old ${round}` });
      expect(created.status).toBe(201);
      const payload = [
        { slotnummer: '01', cases: `round ${round}` },
        { slotnummer: '50', cases: `round ${round}` },
      ];
      const [put, del] = await Promise.all([
        ctx.http
          .put(`${agentPath(agentId)}/forwarding-slots`)
          .set('X-API-Key', w.key)
          .send({ slots: payload }),
        ctx.http.delete(`${agentPath(agentId)}/forwarding-slots/${created.body.id}`).set('X-API-Key', w.key),
      ]);
      expectNo5xx(put, del);
      expect(put.status).toBe(200);
      expect([204, 404]).toContain(del.status);
      expect(await slotsInDb(agentId)).toEqual(payload);
      await ctx.http
        .put(`${agentPath(agentId)}/forwarding-slots`)
        .set('X-API-Key', w.key)
        .send({ slots: [] });
    }
  });

  it('slot PUTs with the agent id in mixed case serialise: exactly one payload wins each round', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const spellings = [agentId, agentId.toUpperCase()];
    for (let round = 0; round < ROUNDS; round++) {
      const payloads = Array.from({ length: 10 }, (_, p) =>
        Array.from({ length: (p % 4) + 1 }, (_, i) => ({ slotnummer: `${p}${i}`, cases: `payload ${p}` })),
      );
      const responses = await Promise.all(
        payloads.map((slots, p) =>
          ctx.http
            .put(`${agentPath(spellings[p % 2]!)}/forwarding-slots`)
            .set('X-API-Key', w.key)
            .send({ slots }),
        ),
      );
      expectNo5xx(...responses);
      expect(responses.map((r) => r.status)).toEqual(payloads.map(() => 200));
      const final = await slotsInDb(agentId);
      const winner = payloads.find(
        (p) => p.length === final.length && p.every((s, i) => final[i]!.slotnummer === s.slotnummer),
      );
      expect(winner).toBeDefined();
      expect(final).toEqual(winner);
    }
  });
});

describe('employees and tools', () => {
  it('employee DELETE vs a tool linking the employee: no 5xx, and no tool links a deleted employee', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    for (let round = 0; round < ROUNDS; round++) {
      const employee = await ctx.http
        .post(`${agentPath(agentId)}/employees`)
        .set('X-API-Key', w.key)
        .send({ name: `Erika ${round}`, phone_number: '+4930777000' });
      expect(employee.status).toBe(201);
      const [del, link] = await Promise.all([
        ctx.http.delete(`${agentPath(agentId)}/employees/${employee.body.id}`).set('X-API-Key', w.key),
        ctx.http
          .post(`${agentPath(agentId)}/tools`)
          .set('X-API-Key', w.key)
          .send({
            name: `to_erika_${round}`,
            tool_type: 'transfer_call',
            description: 'A test tool',
            employee_id: employee.body.id,
            config: { transfer_mode: 'cold' },
          }),
      ]);
      expectNo5xx(del, link);
      expect([204, 409]).toContain(del.status);
      expect([201, 400]).toContain(link.status);
      expect(del.status === 204).toBe(link.status === 400);
      const exists = (await ctx.db('employees').where({ id: employee.body.id }).first('id')) !== undefined;
      const linked = await ctx.db('tools').where({ employee_id: employee.body.id }).select('id');
      expect(exists).toBe(linked.length > 0);
    }
  });

  it('employee DELETE vs a tool PATCH linking the employee: no 5xx, and no dangling link', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    for (let round = 0; round < ROUNDS; round++) {
      const employee = await ctx.http
        .post(`${agentPath(agentId)}/employees`)
        .set('X-API-Key', w.key)
        .send({ name: `Max ${round}`, phone_number: '+4930888000' });
      const toolId = await createTool(agentId, `transfer_${round}`, {
        tool_type: 'transfer_call',
        config: { phone_number: '+4930123456', transfer_mode: 'cold' },
      });
      const [del, link] = await Promise.all([
        ctx.http.delete(`${agentPath(agentId)}/employees/${employee.body.id}`).set('X-API-Key', w.key),
        ctx.http
          .patch(`${agentPath(agentId)}/tools/${toolId}`)
          .set('X-API-Key', w.key)
          .send({ employee_id: employee.body.id }),
      ]);
      expectNo5xx(del, link);
      expect([204, 409]).toContain(del.status);
      expect([200, 400]).toContain(link.status);
      const exists = (await ctx.db('employees').where({ id: employee.body.id }).first('id')) !== undefined;
      const linked = await ctx.db('tools').where({ employee_id: employee.body.id }).select('id');
      expect(exists).toBe(linked.length > 0);
    }
  });
  it("employee PATCH of the phone vs a tool linking the employee: the tool ends with the employee's number", async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    for (let round = 0; round < ROUNDS; round++) {
      const employee = await ctx.http
        .post(`${agentPath(agentId)}/employees`)
        .set('X-API-Key', w.key)
        .send({ name: `Lena ${round}`, phone_number: '+4930111000' });
      const toolId = await createTool(agentId, `to_lena_${round}`, {
        tool_type: 'transfer_call',
        config: { phone_number: '+4930123456', transfer_mode: 'cold' },
      });
      const [patchEmployee, link] = await Promise.all([
        ctx.http
          .patch(`${agentPath(agentId)}/employees/${employee.body.id}`)
          .set('X-API-Key', w.key)
          .send({ phone_number: '+4930222000' }),
        ctx.http
          .patch(`${agentPath(agentId)}/tools/${toolId}`)
          .set('X-API-Key', w.key)
          .send({ employee_id: employee.body.id }),
      ]);
      expectNo5xx(patchEmployee, link);
      expect(patchEmployee.status).toBe(200);
      expect(link.status).toBe(200);
      const tool = await ctx.db('tools').where({ id: toolId }).first('config');
      expect(tool.config.phone_number).toBe('+4930222000');
    }
  });
});

describe('organization knowledge base grants', () => {
  it('ten concurrent grants PUTs: all 200, and the grants are exactly one of the payloads', async () => {
    const agents = [w.agentId];
    for (let i = 0; i < 4; i++) agents.push(await ctx.build.freshAgent(w.orgId));
    const created = await ctx.http
      .post(`/v1/organization/${w.orgId}/knowledge-base`)
      .set('Authorization', `Bearer ${w.token}`)
      .send({ title: 'Shared', content: 'Shared company knowledge.' });
    expect(created.status).toBe(201);
    for (let round = 0; round < 3; round++) {
      const payloads = Array.from({ length: 10 }, (_, p) => agents.filter((_, i) => (p + i) % 3 !== 0).sort());
      const responses = await Promise.all(
        payloads.map((agentIds, p) =>
          ctx.http
            .put(`/v1/organization/${w.orgId}/knowledge-base/${created.body.id}/grants`)
            .set('Authorization', `Bearer ${w.token}`)
            // Mixed case too: the same agent ids, canonicalised before anything compares them.
            .send({ agent_ids: p % 2 === 0 ? agentIds : agentIds.map((id) => id.toUpperCase()) }),
        ),
      );
      expectNo5xx(...responses);
      expect(responses.map((r) => r.status)).toEqual(payloads.map(() => 200));
      const grants = (
        await ctx
          .db('kb_document_grants')
          .where({ document_id: created.body.id })
          .orderBy('agent_id')
          .select('agent_id')
      ).map((g) => g.agent_id as string);
      expect(payloads.some((p) => JSON.stringify(p) === JSON.stringify(grants))).toBe(true);
    }
  });
});

describe('the transaction helper', () => {
  const lost = (code: string) => Object.assign(new Error(`lost a race (${code})`), { code });

  it('runs a transaction that lost a race (deadlock, serialization failure) once more, from the start', async () => {
    for (const code of ['40P01', '40001']) {
      let runs = 0;
      const result = await inTransaction(ctx.db, async (trx) => {
        runs++;
        await trx.raw('SELECT 1');
        if (runs === 1) throw lost(code);
        return 'second run';
      });
      expect({ code, runs, result }).toEqual({ code, runs: 2, result: 'second run' });
    }
  });

  it('passes a second loss on (the error handler answers it 409), and never retries other errors', async () => {
    let runs = 0;
    await expect(
      inTransaction(ctx.db, async () => {
        runs++;
        throw lost('40P01');
      }),
    ).rejects.toMatchObject({ code: '40P01' });
    expect(runs).toBe(2);
    runs = 0;
    await expect(
      inTransaction(ctx.db, async () => {
        runs++;
        throw lost('23505');
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(runs).toBe(1);
  });
});
