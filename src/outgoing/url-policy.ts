import ipaddr from 'ipaddr.js';

/**
 * Which addresses outgoing requests (webhooks, http_request tools) may reach. The same rule is
 * applied to a URL when it is saved and to every resolved address when a request connects.
 *
 * Built on ipaddr.js's range classification (the IANA special-purpose registries): only an address
 * in the `unicast` range passes. Loopback, private, link-local, carrier-grade NAT, multicast,
 * broadcast, unspecified, the documentation ranges (TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20), the
 * discard prefix 100::/64, ORCHIDv2, benchmarking and every other special range are refused.
 *
 * IPv6 forms that carry an IPv4 address are unwrapped and the IPv4 address must pass too:
 * - ::/96 (IPv4-compatible, deprecated: `[::127.0.0.1]` is `::7f00:1`),
 * - ::ffff:0:0/96 (IPv4-mapped) and ::ffff:0:0:0/96 (IPv4-translated, SIIT),
 * - 64:ff9b::/96 (NAT64 well-known prefix; DNS64 resolvers synthesise it for every IPv4 host),
 * - 2002::/16 (6to4: the IPv4 address sits in bits 16-47),
 * - 2001::/32 (Teredo: the server address and the obfuscated client address both must pass),
 * - ISATAP interface identifiers (`::0:5efe:a.b.c.d`, `::200:5efe:a.b.c.d` under any prefix): the
 *   IPv4 address and the prefix both must pass.
 * The local-use NAT64 prefix 64:ff9b:1::/48 places the IPv4 address where the operator chose, so it
 * cannot be checked and is refused; IPv4-mapped and IPv4-compatible addresses are checked here and
 * refused outright at connect time (no resolver answers with one legitimately).
 */

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

const WELL_KNOWN_NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function ipv4FromWords(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
}

/** The IPv4 addresses an IPv6 address carries, or undefined when it carries none. */
function embeddedIpv4(address: ipaddr.IPv6): { kind: string; inner: ipaddr.IPv4[] } | undefined {
  const p = address.parts;
  if (isIpv4Compatible(address)) return { kind: 'IPv4-compatible', inner: [ipv4FromWords(p[6]!, p[7]!)] };
  switch (address.range()) {
    case 'ipv4Mapped':
      return { kind: 'IPv4-mapped', inner: [address.toIPv4Address()] };
    case '6to4':
      return { kind: '6to4', inner: [ipv4FromWords(p[1]!, p[2]!)] };
    case 'teredo':
      return { kind: 'Teredo', inner: [ipv4FromWords(p[2]!, p[3]!), ipv4FromWords(p[6]! ^ 0xffff, p[7]! ^ 0xffff)] };
    case 'rfc6145':
      return { kind: 'IPv4-translated', inner: [ipv4FromWords(p[6]!, p[7]!)] };
    case 'rfc6052':
      // Only the well-known /96 says where the IPv4 address is; an empty list refuses the rest.
      return { kind: 'NAT64', inner: address.match(WELL_KNOWN_NAT64) ? [ipv4FromWords(p[6]!, p[7]!)] : [] };
    default:
      return undefined;
  }
}

/** ::/96 except :: and ::1 (those are the unspecified and loopback addresses, not IPv4 carriers). */
function isIpv4Compatible(address: ipaddr.IPv6): boolean {
  const p = address.parts;
  return p.slice(0, 6).every((word) => word === 0) && (p[6] !== 0 || p[7]! > 1);
}

/** The IPv4 address of an ISATAP interface identifier (RFC 5214: 0000:5efe or 0200:5efe, u/g bits free). */
function isatapIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = address.parts;
  return p[5] === 0x5efe && (p[4]! & 0xfcff) === 0 ? ipv4FromWords(p[6]!, p[7]!) : undefined;
}

/** The classification of one address literal (IPv4 or IPv6, no brackets). */
export function classifyAddress(literal: string): AddressVerdict {
  if (!ipaddr.isValid(literal)) return { allowed: false, reason: `${literal} is not an IP address` };
  const address = ipaddr.parse(literal);
  if (address.kind() === 'ipv6') {
    const wrapped = embeddedIpv4(address as ipaddr.IPv6);
    if (wrapped) {
      if (wrapped.inner.length === 0) return { allowed: false, reason: `${literal} is a local-use NAT64 address` };
      const bad = wrapped.inner.find((v4) => v4.range() !== 'unicast');
      if (bad)
        return { allowed: false, reason: `${literal} (${wrapped.kind}) carries ${bad.toString()} (${bad.range()})` };
      return { allowed: true };
    }
    const isatap = isatapIpv4(address as ipaddr.IPv6);
    if (isatap && isatap.range() !== 'unicast')
      return { allowed: false, reason: `${literal} (ISATAP) carries ${isatap.toString()} (${isatap.range()})` };
  }
  const range = address.range();
  if (range !== 'unicast') return { allowed: false, reason: `${literal} is in a special-purpose range (${range})` };
  return { allowed: true };
}

/**
 * Addresses refused even where private targets are allowed (local development): the cloud
 * metadata services (169.254.169.254, fd00:ec2::254) and the unspecified addresses (0.0.0.0 and ::,
 * which reach the local host), also in their IPv4-mapped forms.
 */
const ALWAYS_FORBIDDEN = ['169.254.169.254', '0.0.0.0', '::', 'fd00:ec2::254'].map((a) => ipaddr.parse(a).toString());

export function isAlwaysForbidden(literal: string): boolean {
  if (!ipaddr.isValid(literal)) return false;
  let address = ipaddr.parse(literal);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress())
    address = (address as ipaddr.IPv6).toIPv4Address();
  return ALWAYS_FORBIDDEN.includes(address.toString());
}

/** True for anything but a public unicast address (see classifyAddress). */
export function isBlockedAddress(address: string): boolean {
  return !classifyAddress(address).allowed;
}

/**
 * `IPv4-mapped` or `IPv4-compatible` for an IPv6 literal in that form (`::ffff:127.0.0.1`,
 * `::ffff:7f00:1`, `::7f00:1`), else undefined: forms no resolver answers with legitimately.
 */
export function ipv4InIpv6Form(address: string): 'IPv4-mapped' | 'IPv4-compatible' | undefined {
  if (!ipaddr.IPv6.isValid(address)) return undefined;
  const parsed = ipaddr.IPv6.parse(address);
  if (parsed.isIPv4MappedAddress()) return 'IPv4-mapped';
  return isIpv4Compatible(parsed) ? 'IPv4-compatible' : undefined;
}

/**
 * A host name as the resolver sees it: lower case, brackets and trailing dots removed
 * (`LOCALHOST.` and `localhost` are the same name).
 */
export function normalizeHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '')
    .toLowerCase();
}

const LOCAL_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/;

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
  if (isAlwaysForbidden(normalizeHost(url.hostname)))
    return 'Cloud metadata and unspecified addresses are never allowed';
  if (options.allowPrivate) return null;
  const host = normalizeHost(url.hostname);
  if (host === '' || LOCAL_NAME.test(host)) return 'Local and private addresses are not allowed';
  if (ipaddr.isValid(host)) {
    if (!ipaddr.IPv4.isValidFourPartDecimal(host) && !ipaddr.IPv6.isValid(host)) {
      // Non-canonical IPv4 forms (decimal, octal, hex) that URL parsing left unresolved.
      return 'Must be a valid host name or address';
    }
    if (isBlockedAddress(host)) return 'Local and private addresses are not allowed';
  } else if (/^[0-9.]+$|^0x/i.test(host)) {
    return 'Must be a valid host name or address';
  }
  return null;
}
