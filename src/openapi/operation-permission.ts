const PERMISSION_IN_SUMMARY = /\b([a-z]+:(?:read|write))\b/;

/**
 * The permission an operation of the document needs: its `x-permission` declaration when it has one,
 * else the permission its summary names (`List calls (calls:read)`); undefined for the public and
 * the role-only operations (API keys, webhook secret, /me).
 */
export function operationPermission(operation: { summary?: string; 'x-permission'?: unknown }): string | undefined {
  const declared = operation['x-permission'];
  return typeof declared === 'string' ? declared : PERMISSION_IN_SUMMARY.exec(operation.summary ?? '')?.[1];
}
