import { createHash, timingSafeEqual } from 'node:crypto';

/** RFC 7636 §4.1: 43–128 characters of [A-Z] [a-z] [0-9] - . _ ~. */
const VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge is base64url(SHA-256) without padding: exactly 43 characters. */
const S256_CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const isVerifier = (value: unknown): value is string => typeof value === 'string' && VERIFIER_PATTERN.test(value);
export const isS256Challenge = (value: unknown): value is string => typeof value === 'string' && S256_CHALLENGE_PATTERN.test(value);

/** RFC 7636 §4.2: BASE64URL(SHA256(ASCII(code_verifier))); a verifier is unreserved ASCII, whose UTF-8 bytes are its ASCII bytes. */
export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** RFC 7636 §4.6, compared in constant time. */
export function verifierMatches(verifier: unknown, challenge: string): boolean {
  if (!isVerifier(verifier)) return false;
  const a = Buffer.from(s256(verifier));
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}
