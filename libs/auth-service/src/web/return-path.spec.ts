import { pathOf, returnPath, returnUrl } from './return-path';

describe('return addresses (next, back)', () => {
  it.each([
    ['/en/developer', '/en/developer'],
    ['/de/signin?next=%2Fde%2Fdeveloper', '/de/signin?next=%2Fde%2Fdeveloper'],
    ['/oauth/authorize?client_id=a&state=b', '/oauth/authorize?client_id=a&state=b'],
    // An authorization request carries encoded URLs and dots in its query: they stay.
    [
      '/en/login?client_id=app&redirect_uri=https%3A%2F%2Fapp.example%2Fcb%2E&scope=read%3Aaccounts',
      '/en/login?client_id=app&redirect_uri=https%3A%2F%2Fapp.example%2Fcb%2E&scope=read%3Aaccounts',
    ],
    ['/en/developer#tokens', '/en/developer#tokens'],
    ['/', '/'],
    // Dot segments that stay on this site are resolved, and the result is what is returned.
    ['/en/../de/developer', '/de/developer'],
    ['/@evil.example', '/@evil.example'],
  ])('keeps %j as %j', (value, kept) => {
    expect(returnPath(value)).toBe(kept);
    expect(returnPath(kept)).toBe(kept);
  });

  it.each([
    '/.//evil.example/x',
    '/%2e//evil.example/x',
    '/%2E//evil.example/x',
    '/%2e%2e//evil.example/x',
    '/en/..//evil.example/x',
    '/en/%2e%2e//evil.example/x',
    '/./\\evil.example',
    '/\\evil.example',
    '\\/evil.example',
    '\\\\evil.example',
    '/%5cevil.example',
    '/%5Cevil.example',
    '/%2fevil.example',
    '/%2F%2Fevil.example',
    '//evil.example',
    '///evil.example',
    'https://evil.example',
    'http://evil.example/en/developer',
    'HTTPS:evil.example',
    'javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    '/\r\n/evil.example',
    '\t//evil.example',
    ' /en/developer',
    '/a b',
    '/%00/x',
    '/%09/evil.example',
    '/%0a/x',
    '/\u3000/evil.example',
    '/ｅvil',
    '',
    `/${'a'.repeat(2048)}`,
  ])('refuses %j', (value) => {
    expect(returnPath(value)).toBeUndefined();
  });

  it.each([42, undefined, null, ['/en/developer'], { next: '/en/developer' }])('refuses a value that is not a string: %j', (value) => {
    expect(returnPath(value)).toBeUndefined();
  });

  it('checks a rewritten address again', () => {
    const url = returnUrl('/en/signin');
    url.pathname = '//evil.example/x';
    expect(pathOf(url)).toBeUndefined();
    url.pathname = '/de/signin';
    expect(pathOf(url)).toBe('/de/signin');
  });
});
