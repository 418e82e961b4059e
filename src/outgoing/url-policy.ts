import { BlockList, isIP } from 'node:net';

/**
 * Which addresses outgoing requests (webhooks, http_request tools) may reach. The same list is
 * checked on a URL when it is saved and on every resolved address when a request connects.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** IPv4-mapped and -compatible IPv6 forms (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as their IPv4 address. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = Number.parseInt(hex[1]!, 16);
    const low = Number.parseInt(hex[2]!, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return undefined;
}

/** Loopback, private, link-local, multicast, reserved, and IPv4-mapped forms of them. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4) return blocked.check(v4, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
}

/**
 * The save-time check of an outgoing URL: http(s), no credentials, and not a blocked address
 * literal or a local name. Returns the problem, or null. Names are resolved at connect time.
 */
export function outgoingUrlProblem(value: string, options: { allowPrivate: boolean }): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'Must be a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'Only http and https URLs are allowed';
  if (url.username || url.password) return 'Credentials in the URL are not allowed';
  if (options.allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) {
    return 'Local and private addresses are not allowed';
  }
  if (isIP(host) && isBlockedAddress(host)) return 'Local and private addresses are not allowed';
  // Non-canonical IPv4 forms (decimal, octal, hex) that URL parsing left unresolved.
  if (/^[0-9.]+$|^0x/i.test(host) && !isIP(host)) return 'Must be a valid host name or address';
  return null;
}
