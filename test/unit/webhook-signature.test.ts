import { describe, expect, it } from 'vitest';
import { serializePayload } from '../../src/modules/webhooks/webhook-payload.js';
import { signingSecrets, type WebhookSecretRow } from '../../src/modules/webhooks/webhook-secret.repository.js';
import {
  generateWebhookSecret,
  sign,
  signatureHeaders,
  verifySignature,
} from '../../src/modules/webhooks/webhook-signature.js';

describe('Standard Webhooks signatures', () => {
  it('matches the test vector of the Standard Webhooks reference libraries', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(sign(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('generates whsec_ secrets of 32 random bytes, different every time', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(a);
  });

  it('puts one v1 signature per secret into the header, each verifiable on its own', () => {
    const [s1, s2] = [generateWebhookSecret(), generateWebhookSecret()];
    const at = new Date('2026-11-21T10:00:00.900Z');
    const headers = signatureHeaders([s1, s2], 'evt-1', at, '{"a":1}');
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    const given = {
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
    };
    expect(verifySignature(s1, given, '{"a":1}', at)).toBe(true);
    expect(verifySignature(s2, given, '{"a":1}', at)).toBe(true);
    expect(verifySignature(generateWebhookSecret(), given, '{"a":1}', at)).toBe(false);
    expect(verifySignature(s1, given, '{"a":2}', at)).toBe(false);
    expect(verifySignature(s1, { ...given, id: 'evt-2' }, '{"a":1}', at)).toBe(false);
    expect(verifySignature(s1, given, '{"a":1}', new Date(at.getTime() + 10 * 60 * 1000))).toBe(false);
  });
});

describe('signingSecrets', () => {
  const row = (expires: Date | null): WebhookSecretRow => ({
    organization_id: 'o',
    secret: 'whsec_new',
    previous_secret: expires ? 'whsec_old' : null,
    previous_secret_expires_at: expires,
    rotated_at: null,
    created_at: new Date(0),
  });
  const now = new Date('2026-11-21T10:00:00Z');

  it('signs with the previous secret too until its grace period ends', () => {
    expect(signingSecrets(row(new Date(now.getTime() + 1)), now)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(row(now), now)).toEqual(['whsec_new']);
    expect(signingSecrets(row(null), now)).toEqual(['whsec_new']);
  });
});

describe('serializePayload', () => {
  it("puts event first and the call fields in the spec's order, whatever order jsonb returned", () => {
    const body = serializePayload('call.completed', {
      call: { transcript: '[]', agent_id: 'a', id: 'c', extra: 1, duration: 3 },
      event: 'call.completed',
    });
    expect(body).toBe(
      '{"event":"call.completed","call":{"id":"c","duration":3,"transcript":"[]","agent_id":"a","extra":1}}',
    );
  });

  it('fills in a missing event name and keeps unknown event types as they are', () => {
    expect(serializePayload('employee.forwarding_created', { reasons: [], employee: { name: 'A' } })).toBe(
      '{"event":"employee.forwarding_created","employee":{"name":"A"},"reasons":[]}',
    );
    expect(serializePayload('other.event', { b: 1, a: 2 })).toBe('{"event":"other.event","b":1,"a":2}');
  });
});
