import ipaddr from 'ipaddr.js';

/**
 * A key's network allow-list (`allowed_ips`): pure rules over ipaddr.js, no I/O. Entries are IPv4 or
 * IPv6 addresses or CIDR ranges, kept in one canonical text form; a client address is matched after
 * `ipaddr.process`, so an IPv4 client that reaches a dual-stack socket as `::ffff:a.b.c.d` is
 * matched as the IPv4 address it is.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** One allowed network: its first address and prefix length (32 or 128 for a single address). */
export type IpRange = readonly [Address, number];

/** The parsed allow-list of a credential: built once when the key is loaded, then only matched. */
export type IpAllowList = readonly IpRange[];

export const MAX_ALLOWED_IPS = 50;

const FORMAT_HINT =
  'Must be an IPv4 or IPv6 address or CIDR range, such as 203.0.113.7, 203.0.113.0/24 or 2001:db8::/32';

/** Dotted-quad IPv4 only (no `127.1`, `0x7f.0.0.1`), IPv6 without a zone id. */
function parseAddress(text: string): Address | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (text.includes(':') && !text.includes('%') && ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return undefined;
}

function fullLength(address: Address): number {
  return address.kind() === 'ipv4' ? 32 : 128;
}

/** `address` with every bit past `bits` cleared. */
function networkOf(address: Address, bits: number): Address {
  const bytes = address.toByteArray().map((byte, i) => {
    const keep = Math.min(8, Math.max(0, bits - i * 8));
    return byte & ((0xff << (8 - keep)) & 0xff);
  });
  return ipaddr.fromByteArray(bytes);
}

/**
 * The stored form of one entry (`203.0.113.7`, `203.0.113.0/24`, `2001:db8::/32`: RFC 5952 text,
 * no `/32` or `/128` on a single address, an IPv4-mapped IPv6 entry as its IPv4 form), or what is
 * wrong with it. A range with host bits set (`10.1.2.3/8`) is refused rather than silently widened.
 */
export function canonicalIpEntry(text: string): { entry: string } | { error: string } {
  const slash = text.indexOf('/');
  let address = parseAddress(slash === -1 ? text : text.slice(0, slash));
  if (!address) return { error: FORMAT_HINT };
  let bits = fullLength(address);
  if (slash !== -1) {
    const prefix = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits) return { error: `The prefix length must be 0..${bits}` };
    bits = Number(prefix);
  }
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    address = (address as ipaddr.IPv6).toIPv4Address();
    bits -= 96;
  }
  const network = networkOf(address, bits);
  if (network.toString() !== address.toString()) {
    return { error: `Host bits are set; the range is ${network.toString()}/${bits}` };
  }
  return { entry: bits === fullLength(address) ? address.toString() : `${address.toString()}/${bits}` };
}

/** Parses stored (canonical) entries; null stays null (any address). An unreadable entry matches nothing. */
export function compileAllowList(entries: readonly string[] | null): IpAllowList | null {
  if (entries === null) return null;
  return entries.flatMap((entry): IpRange[] => {
    try {
      return [entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), fullLength(ipaddr.parse(entry))]];
    } catch {
      return [];
    }
  });
}

/** The client address as the allow-list compares it (IPv4-mapped IPv6 as IPv4), or undefined. */
export function normaliseAddress(address: string | undefined): Address | undefined {
  if (!address || !ipaddr.isValid(address)) return undefined;
  return ipaddr.process(address);
}

/** True when `address` (a socket or forwarded address) lies in one of the list's ranges. */
export function isAddressAllowed(list: IpAllowList, address: string | undefined): boolean {
  const client = normaliseAddress(address);
  if (!client) return false;
  const kind = client.kind();
  return list.some(([network, bits]) => network.kind() === kind && client.match(network, bits));
}
