import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import {
  addressProblem,
  guardedRequest,
  guardOptionsFromConfig,
  OutgoingRequestError,
  type GuardOptions,
  type Resolver,
} from '../../src/outgoing/guarded-request.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

// Every request here targets 127.0.0.1 or ::1; refusals are proven by the receiver seeing nothing.
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const strict: GuardOptions = { allowPrivate: false, timeoutMs: 1000 };
const relaxed: GuardOptions = { allowPrivate: true, timeoutMs: 1000 };
/** A resolver with fixed answers, standing in for a DNS server (nothing leaves the machine). */
const answers =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

async function refusal(url: string, options: GuardOptions): Promise<OutgoingRequestError> {
  const error = await guardedRequest({ url, method: 'POST', body: '{}' }, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutgoingRequestError);
  return error as OutgoingRequestError;
}

describe('guardedRequest refuses without sending', () => {
  it.each([
    ['an IPv4 loopback literal', (port: number) => `http://127.0.0.1:${port}/ok/a`],
    ['another loopback address', (port: number) => `http://127.1.2.3:${port}/ok/b`],
    ['the IPv6 loopback', (port: number) => `http://[::1]:${port}/ok/c`],
    ['an IPv4-mapped IPv6 loopback', (port: number) => `http://[::ffff:127.0.0.1]:${port}/ok/d`],
    ['an IPv4-compatible IPv6 loopback', (port: number) => `http://[::127.0.0.1]:${port}/ok/f`],
    ['the name localhost', (port: number) => `http://localhost:${port}/ok/e`],
  ])('refuses %s', async (_name, url) => {
    const before = receiver.received.length;
    const error = await refusal(url(receiver.port), strict);
    expect(error.reason).toBe('refused');
    expect(error.message).toMatch(/^Refused: /);
    expect(receiver.received.length).toBe(before);
  });

  it('refuses a public-looking name whose DNS answer is a loopback address, checked when connecting', async () => {
    const before = receiver.received.length;
    const error = await refusal(`http://hooks.example.com:${receiver.port}/ok/x`, {
      ...strict,
      resolve: answers('127.0.0.1'),
    });
    expect(error.reason).toBe('refused');
    expect(error.message).toContain('hooks.example.com resolves to a forbidden address');
    expect(receiver.received.length).toBe(before);
  });

  it('refuses a name when any one of its DNS answers is forbidden', async () => {
    const error = await refusal(`http://mixed.example.com:${receiver.port}/ok/y`, {
      ...strict,
      resolve: answers('::ffff:127.0.0.1', '127.0.0.1'),
    });
    expect(error.reason).toBe('refused');
  });

  it('refuses a DNS answer in IPv4-mapped IPv6 form', async () => {
    const error = await refusal(`http://mapped.example.com:${receiver.port}/ok/z`, {
      ...strict,
      resolve: answers('::ffff:7f00:1'),
    });
    expect(error.message).toContain('IPv4-mapped IPv6 address');
  });

  it.each(['::7f00:1', '::ffff:0:7f00:1', '2606:4700::5efe:a00:1', '64:ff9b::a00:1'])(
    'refuses a DNS answer %s that embeds a non-public IPv4 address',
    async (address) => {
      const error = await refusal(`http://embedded.example.com:${receiver.port}/ok/w`, {
        ...strict,
        resolve: answers(address),
      });
      expect(error.reason).toBe('refused');
      expect(error.message).toContain('embedded.example.com resolves to a forbidden address');
    },
  );

  it.each(['ftp://127.0.0.1/file', 'file:///etc/passwd', 'gopher://example.com/', 'not a url'])(
    'refuses %s, which is not http or https, even when private targets are allowed',
    async (url) => {
      const error = await refusal(url, relaxed);
      expect(error.reason).toBe('refused');
    },
  );
});

describe('addressProblem', () => {
  it.each([
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'ff02::1',
    '::ffff:10.0.0.1',
    '::ffff:8.8.8.8',
    '::ffff:a00:1',
    '64:ff9b::a00:1',
  ])('refuses %s', (address) => {
    expect(addressProblem(address)).not.toBeNull();
  });

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111'])('allows the public address %s', (address) => {
    expect(addressProblem(address)).toBeNull();
  });
});

describe('guardedRequest with private targets allowed (tests, local development)', () => {
  it('connects to the address its own lookup returned and sends the request as given', async () => {
    const url = `http://receiver.test:${receiver.port}/ok/lookup`;
    const res = await guardedRequest(
      { url, method: 'POST', headers: { 'content-type': 'application/json', 'x-probe': '1' }, body: '{"a":1}' },
      { ...relaxed, resolve: answers('127.0.0.1') },
    );
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('{"ok":true}');
    const [seen] = receiver.requestsTo(url);
    expect(seen).toMatchObject({ method: 'POST', body: '{"a":1}' });
    expect(seen!.headers.host).toBe(`receiver.test:${receiver.port}`);
    expect(seen!.headers['x-probe']).toBe('1');
  });

  it('reaches the IPv6 loopback', async () => {
    const res = await guardedRequest({ url: `http://[::1]:${receiver.port}/ok/v6` }, relaxed).catch((e: Error) => e);
    // Machines without IPv6 on loopback answer with a network error; either way it was not refused.
    if (res instanceof OutgoingRequestError) expect(res.reason).toBe('network');
    else expect((res as { status: number }).status).toBe(200);
  });

  it('returns a redirect as it is, without following it', async () => {
    const res = await guardedRequest({ url: receiver.url('redirect') }, relaxed);
    expect(res.status).toBe(302);
    expect(res.headers.location).toMatch(/^\/ok\/after-redirect-/);
    expect(receiver.received.filter((r) => r.path === res.headers.location)).toEqual([]);
  });

  it('cuts a receiver that never answers at the timeout', async () => {
    const started = Date.now();
    const error = await refusal(receiver.url('hang'), { ...relaxed, timeoutMs: 150 });
    expect(error).toMatchObject({ reason: 'timeout', message: 'Timed out after 150 ms' });
    expect(error.durationMs).toBeGreaterThanOrEqual(145);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('reads at most maxResponseBytes of the response body', async () => {
    const res = await guardedRequest({ url: receiver.url('big') }, { ...relaxed, maxResponseBytes: 1000 });
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(1000);
    expect(res.truncated).toBe(true);
  });

  it('reports a refused connection as a network error', async () => {
    const closed = await startReceiver();
    const url = closed.url('ok');
    await closed.close();
    const error = await refusal(url, relaxed);
    expect(error.reason).toBe('network');
    expect(error.message).toContain('ECONNREFUSED');
  });
});

describe('guardOptionsFromConfig', () => {
  it('gives a 5 second timeout and refuses private targets unless configured otherwise', () => {
    expect(guardOptionsFromConfig(parseConfig({ NODE_ENV: 'test' }))).toEqual({ allowPrivate: false, timeoutMs: 5000 });
    expect(
      guardOptionsFromConfig(
        parseConfig({ NODE_ENV: 'test', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '250' }),
      ),
    ).toEqual({ allowPrivate: true, timeoutMs: 250 });
  });
});

describe('metadata and unspecified addresses', () => {
  it.each([
    'http://169.254.169.254/latest/meta-data',
    'http://[fd00:ec2::254]/latest',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://[::ffff:169.254.169.254]/',
  ])('refuses %s even where private targets are allowed', async (url) => {
    const error = await refusal(url, relaxed);
    expect(error.reason).toBe('refused');
  });

  it.each(['169.254.169.254', 'fd00:ec2::254', '0.0.0.0', '::'])(
    'refuses a name resolving to %s even where private targets are allowed',
    async (address) => {
      const error = await refusal('http://metadata.example.test/', { ...relaxed, resolve: answers(address) });
      expect(error.reason).toBe('refused');
      expect(error.message).toContain('never allowed');
    },
  );
});
