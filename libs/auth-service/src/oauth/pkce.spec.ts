import { preferredLocale } from '../web/locale';
import { responseUrl } from './authorize';
import { isS256Challenge, isVerifier, s256, verifierMatches } from './pkce';
import { parseScopes, scopeString } from './scopes';

describe('PKCE (RFC 7636)', () => {
  it('computes S256 as in the RFC 7636 appendix B example', () => {
    expect(s256('a'.repeat(128))).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // RFC 7636 appendix B: verifier → challenge.
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('accepts verifiers of 43 to 128 characters of the unreserved alphabet only', () => {
    expect(isVerifier('a'.repeat(43))).toBe(true);
    expect(isVerifier('A-._~0'.repeat(21) + 'xy')).toBe(true);
    expect(isVerifier('a'.repeat(42))).toBe(false);
    expect(isVerifier('a'.repeat(129))).toBe(false);
    expect(isVerifier('a'.repeat(42) + '+')).toBe(false);
    expect(isVerifier(undefined)).toBe(false);
  });

  it('matches a verifier with its challenge only', () => {
    const verifier = 'x'.repeat(50);
    expect(verifierMatches(verifier, s256(verifier))).toBe(true);
    expect(verifierMatches('y'.repeat(50), s256(verifier))).toBe(false);
    expect(verifierMatches(verifier, verifier)).toBe(false); // "plain" never matches
    expect(isS256Challenge(s256(verifier))).toBe(true);
    expect(isS256Challenge(verifier)).toBe(false);
  });

  it('refuses a verifier outside the rules even when its hash is the challenge, and anything that only looks like one as text', () => {
    const tooShort = 'x'.repeat(42);
    expect(verifierMatches(tooShort, s256(tooShort))).toBe(false);
    expect(verifierMatches('x'.repeat(50), 'short')).toBe(false);
    const verifier = 'v'.repeat(43);
    expect(isVerifier([verifier])).toBe(false);
    expect(isS256Challenge([s256(verifier)])).toBe(false);
  });
});

describe('authorization request helpers', () => {
  it('read comma- and space-separated scopes in canonical order', () => {
    expect(parseScopes('read:banking,read:accounts')).toEqual({ scopes: ['read:accounts', 'read:banking'] });
    expect(parseScopes('read:accounts read:orders')).toEqual({ scopes: ['read:accounts', 'read:orders'] });
    expect(parseScopes('read:accounts,root')).toEqual({ unknown: 'root' });
    expect(scopeString(['write:orders', 'read:accounts'])).toBe('read:accounts write:orders');
  });

  it('add response parameters to the redirect URI, keeping its own query', () => {
    expect(responseUrl('https://app.example/cb?tenant=7', { code: 'c', state: 's&x', error: undefined }, 'http://login.example')).toBe(
      'https://app.example/cb?tenant=7&code=c&state=s%26x&iss=http%3A%2F%2Flogin.example',
    );
  });

  it('pick the page language from ui_locales or Accept-Language', () => {
    expect(preferredLocale('de', undefined)).toBe('de');
    expect(preferredLocale(undefined, 'es-ES,de-CH;q=0.8,en;q=0.5')).toBe('de');
    expect(preferredLocale(undefined, 'fr-FR,de;q=0.8')).toBe('fr');
    expect(preferredLocale(undefined, 'es')).toBe('en');
  });
});
