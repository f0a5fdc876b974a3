import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * PAT strings look like `tpat_<16>.<32><6>`: a recognisable prefix so secret scanners can find
 * leaked tokens, a random secret, and a CRC-32 checksum so typos and random guesses are turned
 * away before any database lookup.
 */
const PAT_PREFIX = 'tpat_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ID_LENGTH = 16;
const SECRET_LENGTH = 32; // 32 base62 characters ≈ 190 bits
const CHECKSUM_LENGTH = 6;
const PAT_PATTERN = new RegExp(`^${PAT_PREFIX}[0-9A-Za-z]{${ID_LENGTH}}\\.[0-9A-Za-z]{${SECRET_LENGTH + CHECKSUM_LENGTH}}$`);
export const TOKEN_ID_PATTERN = new RegExp(`^${PAT_PREFIX}[0-9A-Za-z]{${ID_LENGTH}}$`);

function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

function base62(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

const checksum = (tokenId: string, secretBody: string) => base62(crc32(`${tokenId}.${secretBody}`), CHECKSUM_LENGTH);

export interface MintedPat {
  tokenId: string;
  secret: string;
  token: string;
}

export function mintPat(): MintedPat {
  const tokenId = PAT_PREFIX + randomBase62(ID_LENGTH);
  const body = randomBase62(SECRET_LENGTH);
  const secret = body + checksum(tokenId, body);
  return { tokenId, secret, token: `${tokenId}.${secret}` };
}

/** Splits a PAT string; null when its shape or checksum is wrong. */
export function parsePat(token: unknown): { tokenId: string; secret: string } | null {
  if (typeof token !== 'string' || !PAT_PATTERN.test(token)) return null;
  const [tokenId, secret] = token.split('.') as [string, string];
  const body = secret.slice(0, SECRET_LENGTH);
  if (secret.slice(SECRET_LENGTH) !== checksum(tokenId, body)) return null;
  return { tokenId, secret };
}

/**
 * The token id of a string shaped like a PAT, even one whose checksum fails: enough to count
 * guesses against that token and to show its owner the attempt. Nothing is trusted from it.
 */
export function tokenIdOf(token: unknown): string | undefined {
  return typeof token === 'string' && PAT_PATTERN.test(token) ? token.slice(0, token.indexOf('.')) : undefined;
}

export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Constant-time comparison of a presented secret with the stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
