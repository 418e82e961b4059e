import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM with the key from SECRETS_KEY: `v1.<iv>.<tag>.<ciphertext>` (base64url), a fresh
 * 12-byte IV per value. The tag makes a changed or foreign value fail to open instead of opening wrong.
 */
export class SecretSealer {
  private readonly key: Buffer | null;

  constructor(hexKey: string | undefined) {
    this.key = hexKey ? Buffer.from(hexKey, 'hex') : null;
  }

  /** Whether a key is configured (production without SECRETS_KEY has none). */
  get available(): boolean {
    return this.key !== null;
  }

  seal(plain: string): string {
    const key = this.requireKey();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), data]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  open(sealed: string): string {
    const key = this.requireKey();
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('Not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }

  private requireKey(): Buffer {
    if (!this.key) throw new Error('SECRETS_KEY is not configured');
    return this.key;
  }
}
