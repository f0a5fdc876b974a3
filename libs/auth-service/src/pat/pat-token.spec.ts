import { hashSecret, mintPat, parsePat, secretMatches, tokenIdOf } from './pat-token';

describe('PAT strings', () => {
  it('are <tokenId>.<secret> with a recognisable prefix and parse back', () => {
    const pat = mintPat();
    expect(pat.token).toMatch(/^tpat_[0-9A-Za-z]{16}\.[0-9A-Za-z]{38}$/);
    expect(parsePat(pat.token)).toEqual({ tokenId: pat.tokenId, secret: pat.secret });
  });

  it('catch a typo through the checksum', () => {
    const pat = mintPat();
    const last = pat.token.at(-8)!;
    const typo = pat.token.slice(0, -8) + (last === 'a' ? 'b' : 'a') + pat.token.slice(-7);
    expect(parsePat(typo)).toBeNull();
    expect(parsePat('tpat_short.x')).toBeNull();
    expect(parsePat(42)).toBeNull();
  });

  it('compare secrets against the stored hash only', () => {
    const pat = mintPat();
    const stored = hashSecret(pat.secret);
    expect(stored).not.toContain(pat.secret);
    expect(secretMatches(pat.secret, stored)).toBe(true);
    expect(secretMatches(mintPat().secret, stored)).toBe(false);
  });

  it('give the token id of anything shaped like a PAT, even with a bad checksum, to count and show attempts', () => {
    const pat = mintPat();
    const typo = pat.token.slice(0, -1) + (pat.token.endsWith('a') ? 'b' : 'a');
    expect(tokenIdOf(typo)).toBe(pat.tokenId);
    expect(tokenIdOf('garbage')).toBeUndefined();
    expect(tokenIdOf({ token: pat.token })).toBeUndefined();
  });
});
