import type { ErrorDetail } from '../../errors/index.js';

/** A stored credential as a bundle shows it: its name, never its value. */
export type SecretRef = { $secret: string };

/** Header and query parameter names (and URL query keys) whose values are credentials. */
const SECRET_NAME = /authorization|token|secret|passw|api[-_]?key|^key$|cookie|signature|^sig$|credential|auth/i;

const URL_FIELDS = ['url', 'lookup_url', 'fetch_case_url', 'verify_plz_url'] as const;

export function isSecretRef(value: unknown): value is SecretRef {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as SecretRef).$secret === 'string'
  );
}

/** A URL carries a credential: a user or password, or a query parameter named like one. */
export function urlHasCredentials(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '') return true;
  return [...url.searchParams.keys()].some((key) => SECRET_NAME.test(key));
}

type Tool = { name: string; config: Record<string, unknown> };
type Secrets = Record<string, string>;

function maskList(list: unknown, prefix: string, secrets: Secrets): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((entry: unknown) => {
    const item = entry as { name?: unknown; value?: unknown };
    if (typeof item?.name !== 'string' || typeof item.value !== 'string' || !SECRET_NAME.test(item.name)) return entry;
    const name = `${prefix}.${item.name}`;
    secrets[name] = item.value;
    return { ...item, value: { $secret: name } };
  });
}

function maskTool(tool: Tool, secrets: Secrets): Tool {
  const config = { ...tool.config };
  const prefix = `tools.${tool.name}`;
  if ('headers' in config) config.headers = maskList(config.headers, `${prefix}.headers`, secrets);
  if ('query_params' in config) config.query_params = maskList(config.query_params, `${prefix}.query_params`, secrets);
  for (const field of URL_FIELDS) {
    const value = config[field];
    if (typeof value === 'string' && urlHasCredentials(value)) {
      secrets[`${prefix}.${field}`] = value;
      config[field] = { $secret: `${prefix}.${field}` };
    }
  }
  return { ...tool, config };
}

/**
 * The bundle with every credential replaced by a `{"$secret": name}` placeholder, and the values by
 * name: the agent's webhook URL when it carries credentials, tool headers and query parameters named
 * like credentials (Authorization, X-Api-Key, token...), tool URLs with credentials.
 */
export function maskSecrets<T extends { spec: { configuration: Record<string, unknown>; tools: Tool[] } }>(
  bundle: T,
): { masked: T; secrets: Secrets } {
  const secrets: Secrets = {};
  const configuration = { ...bundle.spec.configuration };
  const url = configuration.post_call_webhook_url;
  if (typeof url === 'string' && urlHasCredentials(url)) {
    secrets.post_call_webhook_url = url;
    configuration.post_call_webhook_url = { $secret: 'post_call_webhook_url' };
  }
  const tools = bundle.spec.tools.map((tool) => maskTool(tool, secrets));
  return { masked: { ...bundle, spec: { ...bundle.spec, configuration, tools } }, secrets };
}

/**
 * Every placeholder of `value` replaced: by the request's `secrets`, else by the value stored under
 * that name (applying to an existing agent), else a problem naming the field.
 */
export function resolveSecrets(
  value: unknown,
  given: Secrets,
  stored: Secrets,
  path: string,
  details: ErrorDetail[],
): unknown {
  if (isSecretRef(value)) {
    const name = value.$secret;
    if (Object.hasOwn(given, name)) return given[name];
    if (Object.hasOwn(stored, name)) return stored[name];
    details.push({ field: path, message: `Secret "${name}" is neither in the request's secrets nor stored` });
    return value;
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveSecrets(v, given, stored, `${path}[${i}]`, details));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, resolveSecrets(v, given, stored, path ? `${path}.${k}` : k, details)]),
    );
  }
  return value;
}
