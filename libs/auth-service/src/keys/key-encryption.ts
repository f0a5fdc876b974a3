import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const PREFIX = 'enc:v1:';

/**
 * Signing keys' private halves are stored encrypted (AES-256-GCM) with a key derived from
 * AUTH_KEY_ENCRYPTION_KEY, which lives in the environment, never in the database: a copy of
 * the database (a backup, a replica, a read-only SQL injection) signs nothing. The key id is
 * bound as associated data, so a ciphertext cannot be moved onto another key's row.
 */
export class KeyEncryption {
  private readonly key: Buffer;

  /** `purpose` keeps keys derived from one secret for different uses apart (default: auth's signing keys). */
  constructor(secret: string, purpose = 'signing-keys') {
    this.key = Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), `trading-api:${purpose}`, 32));
  }

  static isEncrypted(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }

  encrypt(kid: string, pem: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(Buffer.from(kid));
    const body = Buffer.concat([cipher.update(pem, 'utf8'), cipher.final()]);
    return `${PREFIX}${iv.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}:${body.toString('base64url')}`;
  }

  /** Throws, naming the key, when the stored value was not encrypted with this secret. */
  decrypt(kid: string, stored: string): string {
    const [iv, tag, body] = stored.slice(PREFIX.length).split(':');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv!, 'base64url')).setAAD(Buffer.from(kid));
      decipher.setAuthTag(Buffer.from(tag!, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body!, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`signing key ${kid} cannot be decrypted with AUTH_KEY_ENCRYPTION_KEY (was it changed?)`);
    }
  }
}
