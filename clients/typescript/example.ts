import { createVoiceAgentClient } from './index.js';

/** The README's example: page through agents, change a greeting, add an employee. */
export async function example(baseUrl: string, apiKey: string) {
  const api = createVoiceAgentClient({ baseUrl, apiKey });

  const { data: page, error } = await api.GET('/v1/agents', { params: { query: { page: 1, limit: 10 } } });
  if (error) throw new Error(`${error.error.code}: ${error.error.message} (${error.error.request_id})`);
  const agent = page.data[0];
  if (!agent) return { agents: 0 };

  const { data: updated } = await api.PATCH('/v1/agents/{agentId}', {
    params: { path: { agentId: agent.id } },
    body: { greeting: 'Guten Tag, Praxis Sonnenschein. Wie kann ich helfen?' },
  });

  // Fields with a server-side default (status, active, get_mail, ...) may be left out.
  const { data: employee, response } = await api.POST('/v1/agents/{agentId}/employees', {
    params: { path: { agentId: agent.id } },
    body: { name: 'Erika Mustermann', phone_number: '030 1234567' },
  });

  return {
    agents: page.pagination.total,
    greeting: updated?.greeting,
    employee: { status: employee?.status, phone_number: employee?.phone_number },
    remaining: response.headers.get('X-RateLimit-Remaining'),
  };
}
