import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';

/**
 * `npm run cli -- agent pull <agentId> <dir> | diff <dir> | push <dir>`: an agent as files a person
 * reviews in a pull request, through the HTTP API (VAM_BASE_URL, VAM_API_KEY). `<dir>/agent.yaml` is
 * the bundle; `<dir>/.agent.json` the agent's id and the ETag pulled (push sends it as If-Match);
 * `<dir>/secrets.yaml`, when present (keep it out of version control), fills `{"$secret": name}`.
 */
export async function agentCommand(args: string[]): Promise<unknown> {
  const [sub, ...rest] = args;
  const base = process.env.VAM_BASE_URL?.replace(/\/$/, '');
  const key = process.env.VAM_API_KEY;
  if (!base || !key) throw new Error('agent commands need VAM_BASE_URL and VAM_API_KEY');
  const call = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).catch((error: unknown) => {
      const cause = (error as { cause?: { message?: string } }).cause?.message ?? String(error);
      throw new Error(`Cannot reach the API at ${base} (VAM_BASE_URL): ${cause}`);
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url}: ${refusal(res.status, text)}`);
    return { res, text };
  };
  const files = (dir: string) => ({
    bundle: path.join(dir, 'agent.yaml'),
    state: path.join(dir, '.agent.json'),
    secrets: path.join(dir, 'secrets.yaml'),
  });
  const local = (dir: string) => {
    const f = files(dir);
    if (!existsSync(f.bundle) || !existsSync(f.state))
      throw new Error(`${dir} holds no pulled agent (agent pull first)`);
    const state = JSON.parse(readFileSync(f.state, 'utf8')) as { agent_id: string; etag: string };
    const secrets = existsSync(f.secrets) ? (parse(readFileSync(f.secrets, 'utf8')) as Record<string, string>) : {};
    return { state, body: { ...(parse(readFileSync(f.bundle, 'utf8')) as object), secrets } };
  };
  switch (sub) {
    case 'pull': {
      const [agentId, dir] = rest;
      if (!agentId || !dir) throw new Error('agent pull <agentId> <dir>');
      const { res, text } = await call('GET', `/v1/agents/${agentId}/bundle`, undefined, {
        Accept: 'application/yaml',
      });
      mkdirSync(dir, { recursive: true });
      writeFileSync(files(dir).bundle, text);
      writeFileSync(
        files(dir).state,
        `${JSON.stringify({ agent_id: agentId, etag: res.headers.get('etag') }, null, 2)}\n`,
      );
      return { pulled: agentId, file: files(dir).bundle };
    }
    case 'diff': {
      const [dir] = rest;
      if (!dir) throw new Error('agent diff <dir>');
      const { state, body } = local(dir);
      const { text } = await call('PUT', `/v1/agents/${state.agent_id}/bundle?dry_run=true`, body);
      return stringify(JSON.parse(text));
    }
    case 'push': {
      const [dir] = rest;
      if (!dir) throw new Error('agent push <dir>');
      const { state, body } = local(dir);
      const { text } = await call('PUT', `/v1/agents/${state.agent_id}/bundle`, body, { 'If-Match': state.etag });
      // The pushed state is the new base: pull it again so the next push's If-Match matches.
      const again = await call('GET', `/v1/agents/${state.agent_id}/bundle`, undefined, { Accept: 'application/yaml' });
      writeFileSync(files(dir).bundle, again.text);
      writeFileSync(
        files(dir).state,
        `${JSON.stringify({ ...state, etag: again.res.headers.get('etag') }, null, 2)}\n`,
      );
      return stringify(JSON.parse(text));
    }
    default:
      throw new Error('agent pull <agentId> <dir> | agent diff <dir> | agent push <dir>');
  }
}

/** The API's error envelope as lines a person reads: status, code and message, each field named. */
function refusal(status: number, text: string): string {
  let error: { code?: string; message?: string; details?: { field?: string; message?: string }[] } | undefined;
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error;
  } catch {
    // Not the API's envelope (a proxy's page): shown as it came.
  }
  if (!error?.message) return `${status} ${text}`;
  const hint = status === 401 ? ' (check VAM_API_KEY)' : '';
  const details = (error.details ?? []).map((d) => `\n  ${d.field ?? ''}: ${d.message ?? ''}`).join('');
  return `${[status, error.code, error.message].filter(Boolean).join(' ')}${hint}${details}`;
}
