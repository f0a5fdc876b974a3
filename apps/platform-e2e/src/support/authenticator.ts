import { createHmac, randomBytes } from 'node:crypto';
import { createCryptoPlugin } from '@otplib/core';
import { generate } from '@otplib/totp';

/**
 * An authenticator app, as the specs play one: otplib's TOTP (SHA-1, six digits, 30 s) with HMAC
 * from Node, reading the secret as the dashboard shows it (base32, spaces allowed). Its base32
 * reading is the specs' own, apart from the service's.
 */
const nodeCrypto = createCryptoPlugin({
  hmac: (algorithm, key, data) => new Uint8Array(createHmac(algorithm, key).update(data).digest()),
  randomBytes: (length) => new Uint8Array(randomBytes(length)),
});

function base32Bytes(text: string): Uint8Array {
  const out: number[] = [];
  let value = 0;
  let bits = 0;
  for (const c of text.replace(/\s/g, '')) {
    value = (value << 5) | 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'.indexOf(c);
    bits += 5;
    if (bits >= 8) out.push((value >>> (bits -= 8)) & 255);
  }
  return new Uint8Array(out);
}

/** The code an authenticator app shows for `secret` at `epoch` (seconds). */
export const codeAt = (secret: string, epoch: number) => generate({ secret: base32Bytes(secret), crypto: nodeCrypto, epoch });
