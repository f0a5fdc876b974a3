import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { createCryptoPlugin } from '@otplib/core';
import { generate, verify } from '@otplib/totp';
import { toString as qrSvg } from 'qrcode';

/**
 * Time-based one-time codes (RFC 6238) as authenticator apps compute them: SHA-1, six digits,
 * thirty-second steps. otplib's TOTP, with HMAC and randomness from Node's own crypto (its
 * default plugins are ES modules only, which the test runner's module loader cannot load).
 */
const PERIOD = 30;
const nodeCrypto = createCryptoPlugin({
  name: 'node',
  hmac: (algorithm, key, data) => new Uint8Array(createHmac(algorithm, key).update(data).digest()),
  randomBytes: (length) => new Uint8Array(randomBytes(length)),
});

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding: how authenticator apps take a secret. */
export function toBase32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** A new secret: 20 random bytes (160 bits, the size RFC 4226 recommends), base32. */
export const newTotpSecret = () => toBase32(randomBytes(20));

export function fromBase32(text: string): Uint8Array {
  const clean = text.toUpperCase().replace(/[\s=]/g, '');
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const c of clean) {
    const index = BASE32.indexOf(c);
    if (index < 0) throw new Error('not base32');
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return new Uint8Array(out);
}

/** The code for `secret` (base32) at `epochSeconds`. */
export const totpCode = (secret: string, epochSeconds = Math.floor(Date.now() / 1000)) =>
  generate({ secret: fromBase32(secret), crypto: nodeCrypto, period: PERIOD, epoch: epochSeconds });

/**
 * The time step `code` belongs to, when it is the code of the current step or of the one before
 * or after (a clock a little off, a code typed as it changed); undefined otherwise, and for any
 * step not after `afterTimeStep` (the last one used: each code counts once).
 */
export async function totpStep(secret: string, code: string, afterTimeStep?: number): Promise<number | undefined> {
  if (!/^\d{6}$/.test(code)) return undefined;
  const result = await verify({
    secret: fromBase32(secret),
    token: code,
    crypto: nodeCrypto,
    period: PERIOD,
    epoch: Math.floor(Date.now() / 1000),
    epochTolerance: PERIOD,
    ...(afterTimeStep === undefined ? {} : { afterTimeStep }),
  });
  return result.valid ? result.timeStep : undefined;
}

/** The `otpauth://` link an authenticator app reads from the QR code. */
export function otpauthUri(issuer: string, account: string, secret: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({ secret, issuer, algorithm: 'SHA1', digits: '6', period: String(PERIOD) });
  return `otpauth://totp/${label}?${query.toString()}`;
}

/** The QR code as inline SVG markup (no image request, so the page's policy stays as it is). */
export const qrCodeSvg = (text: string) => qrSvg(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, width: 200 });

/** Recovery codes: `xxxxx-xxxxx` from an alphabet without look-alikes (0/O, 1/I/L), about 50 random bits each. */
const RECOVERY_ALPHABET = '23456789abcdefghjkmnpqrstuvwxyz';
export function newRecoveryCode(): string {
  let out = '';
  for (let i = 0; i < 10; i++) out += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${out.slice(0, 5)}-${out.slice(5)}`;
}

/** As typed: any case, with or without the dash or spaces. Undefined when it cannot be one. */
export function normaliseRecoveryCode(text: string): string | undefined {
  const clean = text.toLowerCase().replace(/[\s-]/g, '');
  return new RegExp(`^[${RECOVERY_ALPHABET}]{10}$`).test(clean) ? `${clean.slice(0, 5)}-${clean.slice(5)}` : undefined;
}
