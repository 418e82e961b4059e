import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';

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
});
