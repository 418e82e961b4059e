import { describe, expect, it } from 'vitest';
import { canonicalIpEntry, compileAllowList, isAddressAllowed } from '../../src/auth/ip-allow-list.js';

const entry = (text: string) => canonicalIpEntry(text);

describe('canonicalIpEntry', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['203.0.113.7/32', '203.0.113.7'],
    ['203.0.113.0/24', '203.0.113.0/24'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['2001:db8::/32', '2001:db8::/32'],
    ['2001:db8::1/128', '2001:db8::1'],
    ['::ffff:198.51.100.7', '198.51.100.7'],
    ['::ffff:198.51.100.0/120', '198.51.100.0/24'],
    ['::/0', '::/0'],
  ])('stores %s as %s', (text, stored) => {
    expect(entry(text)).toEqual({ entry: stored });
  });

  it.each([
    ['not-an-ip', 'IPv4 or IPv6'],
    ['', 'IPv4 or IPv6'],
    ['127.1', 'IPv4 or IPv6'],
    ['0x7f.0.0.1', 'IPv4 or IPv6'],
    ['256.0.0.1', 'IPv4 or IPv6'],
    ['fe80::1%eth0', 'IPv4 or IPv6'],
    ['10.0.0.0/33', 'prefix length must be 0..32'],
    ['2001:db8::/129', 'prefix length must be 0..128'],
    ['10.0.0.0/', 'prefix length'],
    ['10.0.0.0/-1', 'prefix length'],
    ['10.0.0.0/8/8', 'prefix length'],
    ['10.1.2.3/8', 'Host bits are set; the range is 10.0.0.0/8'],
    ['2001:db8::1/32', 'the range is 2001:db8::/32'],
  ])('refuses %j', (text, message) => {
    const result = entry(text);
    expect('error' in result && result.error).toContain(message);
  });
});

describe('isAddressAllowed', () => {
  const list = compileAllowList(['203.0.113.0/24', '198.51.100.7', '2001:db8::/32'])!;

  it.each([
    ['203.0.113.200', true],
    ['203.0.114.1', false],
    ['198.51.100.7', true],
    ['198.51.100.8', false],
    ['::ffff:203.0.113.9', true],
    ['::ffff:198.51.100.7', true],
    ['2001:db8:ffff::1', true],
    ['2001:db9::1', false],
    ['::1', false],
    ['not-an-address', false],
    [undefined, false],
  ])('%s: %s', (address, allowed) => {
    expect(isAddressAllowed(list, address)).toBe(allowed);
  });

  it('never matches an IPv4 client against an IPv6 range, nor the other way round', () => {
    expect(isAddressAllowed(compileAllowList(['::/0'])!, '203.0.113.1')).toBe(false);
    expect(isAddressAllowed(compileAllowList(['0.0.0.0/0'])!, '2001:db8::1')).toBe(false);
    expect(isAddressAllowed(compileAllowList(['0.0.0.0/0'])!, '::ffff:10.0.0.1')).toBe(true);
  });

  it('keeps null as "any address" and skips an unreadable stored entry', () => {
    expect(compileAllowList(null)).toBeNull();
    expect(compileAllowList(['garbage', '10.0.0.0/8'])).toHaveLength(1);
  });
});
