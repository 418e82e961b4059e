import { describe, expect, it } from 'vitest';
import { configWarnings, parseConfig } from '../../src/config.js';

describe('parseConfig', () => {
  it('takes DATABASE_LISTEN_URL beside DATABASE_URL, and refuses it alone', () => {
    const both = parseConfig({
      DATABASE_URL: 'postgres://app@pooler:6432/vam',
      DATABASE_LISTEN_URL: 'postgres://app@db/vam',
    });
    expect(both.DATABASE_LISTEN_URL).toBe('postgres://app@db/vam');
    expect(() => parseConfig({ DATABASE_LISTEN_URL: 'postgres://app@db/vam' })).toThrow(
      'DATABASE_LISTEN_URL requires DATABASE_URL',
    );
  });

  it('bounds the waits on a silent database by default, and takes 0 to turn the silence check off', () => {
    expect(parseConfig({})).toMatchObject({
      DATABASE_CONNECT_TIMEOUT_MS: 3000,
      DATABASE_ACQUIRE_TIMEOUT_MS: 4000,
      DATABASE_SILENCE_MS: 2000,
    });
    expect(parseConfig({ DATABASE_SILENCE_MS: '0' }).DATABASE_SILENCE_MS).toBe(0);
    expect(() => parseConfig({ DATABASE_SILENCE_MS: '50' })).toThrow(
      'DATABASE_SILENCE_MS: must be 0 (off) or 100..600000',
    );
    expect(() => parseConfig({ DATABASE_CONNECT_TIMEOUT_MS: '0' })).toThrow('DATABASE_CONNECT_TIMEOUT_MS');
  });

  it('takes TRUST_PROXY as true, false or a list of proxies, and refuses an entry it cannot read', () => {
    expect(parseConfig({}).TRUST_PROXY).toBe(false);
    expect(parseConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(1); // one hop: the right-most entry
    expect(parseConfig({ TRUST_PROXY: '0' }).TRUST_PROXY).toBe(false);
    expect(
      parseConfig({ TRUST_PROXY: ' 10.0.0.0/8, loopback,2001:DB8::1 , ::ffff:192.0.2.0/120' }).TRUST_PROXY,
    ).toEqual(['10.0.0.0/8', 'loopback', '2001:db8::1', '192.0.2.0/24']);
    expect(() => parseConfig({ TRUST_PROXY: '10.0.0.0/8, proxy.internal' })).toThrow('TRUST_PROXY: proxy.internal');
    expect(() => parseConfig({ TRUST_PROXY: '10.1.2.3/8' })).toThrow('Host bits are set');
  });
});

describe('configWarnings', () => {
  const secret = 'x'.repeat(32);
  it('warns once about TRUST_PROXY=true in production, recommending the proxies, and not otherwise', () => {
    const production = (TRUST_PROXY: string) =>
      configWarnings(
        parseConfig({ NODE_ENV: 'production', JWT_SECRET: secret, SECRETS_KEY: 'ab'.repeat(32), TRUST_PROXY }),
      );
    expect(production('true')).toEqual([
      expect.stringMatching(/^TRUST_PROXY=true trusts X-Forwarded-For from any peer: .*addresses or CIDRs/),
    ]);
    expect(production('1')).toHaveLength(1);
    expect(production('10.0.0.0/8')).toEqual([]);
    expect(production('false')).toEqual([]);
    expect(configWarnings(parseConfig({ NODE_ENV: 'development', TRUST_PROXY: 'true' }))).toEqual([]);
  });

  it('warns about a missing SECRETS_KEY in production only, and refuses one that is not 64 hex characters', () => {
    expect(configWarnings(parseConfig({ NODE_ENV: 'production', JWT_SECRET: secret }))).toEqual([
      expect.stringMatching(/^SECRETS_KEY is not set/),
    ]);
    expect(configWarnings(parseConfig({ NODE_ENV: 'development' }))).toEqual([]);
    expect(() => parseConfig({ SECRETS_KEY: 'abc' })).toThrow(/SECRETS_KEY: must be 64 hexadecimal characters/);
  });
});
