import { createVoiceAgentClient, updateWithRetry } from './index.js';

/** The README's read-modify-write: append to the greeting without losing anyone else's change. */
export async function appendToGreeting(baseUrl: string, apiKey: string, agentId: string, text: string) {
  const api = createVoiceAgentClient({ baseUrl, apiKey });
  const path = { agentId };
  const result = await updateWithRetry(
    () => api.GET('/v1/agents/{agentId}', { params: { path } }),
    (agent, etag) =>
      api.PATCH('/v1/agents/{agentId}', {
        params: { path, header: { 'If-Match': etag } },
        body: { greeting: `${agent.greeting ?? ''} ${text}`.trim() },
      }),
  );
  if (result.error) throw new Error(`update failed with ${result.response.status}`);
  return result.data;
}
