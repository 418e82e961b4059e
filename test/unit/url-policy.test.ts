import { describe, expect, it } from 'vitest';
import { addressProblem } from '../../src/outgoing/guarded-request.js';
import { classifyAddress, normalizeHost, outgoingUrlProblem } from '../../src/outgoing/url-policy.js';

const strict = { allowPrivate: false };

describe('classifyAddress', () => {
  it.each([
    ['0.0.0.0/8', '0.1.2.3'],
    ['10.0.0.0/8', '10.1.2.3'],
    ['100.64.0.0/10 (carrier-grade NAT)', '100.64.0.1'],
    ['127.0.0.0/8', '127.0.0.1'],
    ['169.254.0.0/16', '169.254.169.254'],
    ['172.16.0.0/12', '172.31.255.254'],
    ['192.0.0.0/24', '192.0.0.8'],
    ['TEST-NET-1 192.0.2.0/24', '192.0.2.10'],
    ['192.88.99.0/24 (6to4 relay anycast)', '192.88.99.1'],
    ['192.168.0.0/16', '192.168.1.1'],
    ['198.18.0.0/15 (benchmarking)', '198.19.0.1'],
    ['TEST-NET-2 198.51.100.0/24', '198.51.100.7'],
    ['TEST-NET-3 203.0.113.0/24', '203.0.113.99'],
    ['224.0.0.0/4 (multicast)', '239.1.1.1'],
    ['240.0.0.0/4 (reserved)', '240.0.0.1'],
    ['broadcast', '255.255.255.255'],
    [':: (unspecified)', '::'],
    ['::1 (loopback)', '::1'],
    ['100::/64 (discard)', '100::1'],
    ['2001:db8::/32 (documentation)', '2001:db8::1'],
    ['2001:20::/28 (ORCHIDv2)', '2001:20::1'],
    ['3fff::/20 (documentation)', '3fff::1'],
    ['fc00::/7 (unique local)', 'fd12:3456::1'],
    ['fe80::/10 (link-local)', 'fe80::1'],
    ['ff00::/8 (multicast)', 'ff02::1'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
    ['IPv4-mapped private, hex form', '::ffff:a00:1'],
    ['6to4 carrying 127.0.0.1', '2002:7f00:1::'],
    ['6to4 carrying 10.0.0.1', '2002:a00:1::1'],
    ['Teredo with a private server address', '2001:0:a00:1::f7ff:f7f7'],
    ['Teredo with a loopback client address', '2001:0:808:808::80ff:fffe'],
    ['NAT64 64:ff9b::/96 carrying 127.0.0.1', '64:ff9b::7f00:1'],
    ['NAT64 64:ff9b::/96 carrying 192.168.0.1', '64:ff9b::192.168.0.1'],
    ['local-use NAT64 64:ff9b:1::/48', '64:ff9b:1::808:808'],
    ['IPv4-compatible loopback', '::127.0.0.1'],
    ['IPv4-compatible loopback, hex form', '::7f00:1'],
    ['IPv4-compatible private', '::10.0.0.1'],
    ['IPv4-compatible metadata address', '::a9fe:a9fe'],
    ['IPv4-compatible 0.0.0.2', '::2'],
    ['IPv4-mapped metadata address', '::ffff:169.254.169.254'],
    ['IPv4-translated loopback ::ffff:0:0:0/96', '::ffff:0:7f00:1'],
    ['IPv4-translated private', '::ffff:0:c0a8:1'],
    ['ISATAP carrying 127.0.0.1', '2606:4700::5efe:7f00:1'],
    ['ISATAP (u bit set) carrying 10.0.0.1', '2606:4700::200:5efe:a00:1'],
    ['ISATAP under a link-local prefix', 'fe80::5efe:808:808'],
    ['not an address', 'example.com'],
  ])('refuses %s (%s)', (_range, address) => {
    expect(classifyAddress(address)).toMatchObject({ allowed: false });
  });

  it.each([
    ['public IPv4', '8.8.8.8'],
    ['public IPv4', '93.184.216.34'],
    ['public IPv6', '2606:4700:4700::1111'],
    ['NAT64 64:ff9b::/96 carrying a public address', '64:ff9b::808:808'],
    ['6to4 carrying a public address', '2002:808:808::1'],
    ['Teredo with public server and client addresses', '2001:0:808:808::f7f7:f7f7'],
    ['ISATAP carrying a public address under a public prefix', '2606:4700::5efe:808:808'],
  ])('allows %s (%s)', (_range, address) => {
    expect(classifyAddress(address)).toEqual({ allowed: true });
  });

  it('names the embedded IPv4 address in the reason', () => {
    expect(classifyAddress('2002:7f00:1::')).toEqual({
      allowed: false,
      reason: '2002:7f00:1:: (6to4) carries 127.0.0.1 (loopback)',
    });
  });
});

describe('addressProblem (connect time)', () => {
  it('refuses every IPv4-mapped address, even one carrying a public address', () => {
    expect(addressProblem('::ffff:8.8.8.8')).toContain('IPv4-mapped IPv6 address');
  });

  it('refuses every IPv4-compatible address, even one carrying a public address', () => {
    expect(addressProblem('::808:808')).toContain('IPv4-compatible IPv6 address');
    expect(addressProblem('::7f00:1')).toContain('IPv4-compatible IPv6 address');
  });

  it.each(['2002:7f00:1::', '2001:0:a00:1::f7ff:f7f7', '64:ff9b:1::808:808', '100::1', '192.0.2.1', '::ffff:0:7f00:1'])(
    'refuses %s',
    (address) => {
      expect(addressProblem(address)).not.toBeNull();
    },
  );
});

describe('outgoingUrlProblem (save time)', () => {
  it.each([
    'http://localhost./hook',
    'http://LOCALHOST../hook',
    'http://api.localhost./hook',
    'http://printer.local./hook',
    'http://127.0.0.1./hook',
    'http://[2002:7f00:1::]/hook',
    'http://[2001:0:a00:1::f7ff:f7f7]/hook',
    'http://[64:ff9b::7f00:1]/hook',
    'http://[64:ff9b:1::808:808]/hook',
    'http://[::127.0.0.1]:9/hook',
    'http://[::7f00:1]/hook',
    'http://[::ffff:0:127.0.0.1]/hook',
    'http://[2606:4700::5efe:127.0.0.1]/hook',
    'http://[100::1]/hook',
    'http://192.0.2.1/hook',
    'http://198.51.100.1/hook',
    'http://203.0.113.1/hook',
    'http://2130706433/hook',
    'http://0x7f.1/hook',
  ])('refuses %s', (url) => {
    expect(outgoingUrlProblem(url, strict)).not.toBeNull();
  });

  it.each([
    'https://example.com./hook',
    'https://hooks.example.com/x',
    'http://8.8.8.8/hook',
    'http://[2606:4700::1]/',
  ])('allows %s', (url) => {
    expect(outgoingUrlProblem(url, strict)).toBeNull();
  });

  it('allows private targets when WEBHOOK_ALLOW_PRIVATE_TARGETS is on', () => {
    expect(outgoingUrlProblem('http://localhost./hook', { allowPrivate: true })).toBeNull();
    expect(outgoingUrlProblem('http://[2002:7f00:1::]/hook', { allowPrivate: true })).toBeNull();
  });

  it('normalises host names the way the resolver sees them', () => {
    expect(normalizeHost('LocalHost..')).toBe('localhost');
    expect(normalizeHost('[::1]')).toBe('::1');
  });
});

describe('addresses never allowed', () => {
  it.each(['http://169.254.169.254/x', 'http://[fd00:ec2::254]/x', 'http://0.0.0.0/x', 'http://[::]/x'])(
    'refuses %s even with private targets allowed',
    (url) => {
      expect(outgoingUrlProblem(url, { allowPrivate: true })).toMatch(/never allowed/);
    },
  );
});
