import {
  fromBase32,
  newRecoveryCode,
  newTotpSecret,
  normaliseRecoveryCode,
  otpauthUri,
  qrCodeSvg,
  toBase32,
  totpCode,
  totpStep,
} from './totp';

/** RFC 6238's SHA-1 key: the ASCII digits 1 to 0, twice. */
const RFC_SECRET = toBase32(new TextEncoder().encode('12345678901234567890'));

describe('authenticator codes', () => {
  it("computes RFC 6238's SHA-1 test vectors (their last six digits)", async () => {
    expect(RFC_SECRET).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    await expect(totpCode(RFC_SECRET, 59)).resolves.toBe('287082');
    await expect(totpCode(RFC_SECRET, 1111111109)).resolves.toBe('081804');
    await expect(totpCode(RFC_SECRET, 1234567890)).resolves.toBe('005924');
  });

  it('accepts the current code and its neighbours once each: never a step at or before the last one used', async () => {
    const secret = newTotpSecret();
    const now = Math.floor(Date.now() / 1000);
    const step = await totpStep(secret, await totpCode(secret, now));
    expect(step).toBe(Math.floor(now / 30));
    await expect(totpStep(secret, await totpCode(secret, now), step)).resolves.toBeUndefined();
    await expect(totpStep(secret, await totpCode(secret, now - 30), step)).resolves.toBeUndefined();
    await expect(totpStep(secret, await totpCode(secret, now + 30), step)).resolves.toBe(step! + 1);
    // Two steps away: too far.
    await expect(totpStep(secret, await totpCode(secret, now - 90))).resolves.toBeUndefined();
    await expect(totpStep(secret, 'abcdef')).resolves.toBeUndefined();
  });

  it('makes 160-bit base32 secrets that decode to what was encoded', () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(fromBase32(secret)).toHaveLength(20);
    expect(toBase32(fromBase32(secret.toLowerCase()))).toBe(secret);
    expect(() => fromBase32('not base32!')).toThrow();
  });

  it('reads recovery codes as typed, in any case, with or without the dash', () => {
    const code = newRecoveryCode();
    expect(code).toMatch(/^[2-9a-z]{5}-[2-9a-z]{5}$/);
    expect(normaliseRecoveryCode(` ${code.toUpperCase().replace('-', ' ')} `)).toBe(code);
    expect(normaliseRecoveryCode('12345-67890')).toBeUndefined(); // 0 and 1 are not in the alphabet
    expect(normaliseRecoveryCode('abc')).toBeUndefined();
  });

  it('puts the secret, issuer and account in the otpauth link and draws it as inline SVG', async () => {
    const uri = otpauthUri('Trading API', 'a+b@example.com', 'ABCDEFGH');
    expect(uri).toBe(
      'otpauth://totp/Trading%20API:a%2Bb%40example.com?secret=ABCDEFGH&issuer=Trading+API&algorithm=SHA1&digits=6&period=30',
    );
    const svg = await qrCodeSvg(uri);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).not.toMatch(/<script|style=|href=/);
  });
});
