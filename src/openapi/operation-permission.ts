/**
 * What an operation of the document declares a caller must hold: its `x-permission` (see `access` in
 * common.ts: a permission, `developer_admin`, `signed_in` or `public`). The permission-matrix test
 * fails on an operation without one, so strict query checks and the MCP tools can rely on it.
 */
export function operationPermission(operation: object): string | undefined {
  const declared = (operation as { 'x-permission'?: unknown })['x-permission'];
  return typeof declared === 'string' ? declared : undefined;
}
