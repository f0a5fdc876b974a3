import { hashSecret, mintPat, parsePat, secretMatches, tokenIdOf, TOKEN_ID_PATTERN } from './pat-token';

describe('PAT strings', () => {
  it('are <tokenId>.<secret> with a recognisable prefix and parse back', () => {
    const pat = mintPat();
    expect(pat.token).toMatch(/^tpat_[0-9A-Za-z]{16}\.[0-9A-Za-z]{38}$/);
    expect(parsePat(pat.token)).toEqual({ tokenId: pat.tokenId, secret: pat.secret });
  });

  it('keep parsing the tokens already issued: the checksum is the same base62 CRC-32 it always was', () => {
    // Minted by an earlier build; users hold tokens like it, so the checksum may never change.
    const issued = 'tpat_0123456789ABCDEF.abcdefghijklmnopqrstuvwxyzABCDEF4AV1vP';
    expect(parsePat(issued)).toEqual({ tokenId: 'tpat_0123456789ABCDEF', secret: issued.slice(22) });
  });

  it('refuse anything not shaped like a PAT, without reading it further', () => {
    for (const token of [42, null, ['tpat_x'], 'garbage', 'tpat_0123456789ABCDEF', 'tpat_0123456789ABCDEF.'])
      expect(parsePat(token)).toBeNull();
    expect(TOKEN_ID_PATTERN.test('tpat_0123456789ABCDEF')).toBe(true);
    expect(TOKEN_ID_PATTERN.test('tpat_0123456789ABCDE')).toBe(false);
    expect(TOKEN_ID_PATTERN.test('tpat_0123456789ABCDEF.x')).toBe(false);
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
    // SHA-256 in hex, as stored; a stored value of another length never matches (and never throws).
    expect(hashSecret('secret')).toBe('2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b');
    expect(secretMatches(pat.secret, stored.slice(0, 32))).toBe(false);
  });

  it('give the token id of anything shaped like a PAT, even with a bad checksum, to count and show attempts', () => {
    const pat = mintPat();
    const typo = pat.token.slice(0, -1) + (pat.token.endsWith('a') ? 'b' : 'a');
    expect(tokenIdOf(typo)).toBe(pat.tokenId);
    expect(tokenIdOf('garbage')).toBeUndefined();
    expect(tokenIdOf({ token: pat.token })).toBeUndefined();
    expect(tokenIdOf([pat.token])).toBeUndefined();
    expect(parsePat([pat.token])).toBeNull();
  });
});
