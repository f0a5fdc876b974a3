import { validateClientPolicy } from './client-policy';
import { jwkProblem, jwksUriProblem, validateJwks } from './jwks';
import { validateRegistration } from './registration';
import { redirectUriProblem, validatePublicPages, validateRedirectUris, validateWebOrigins, webOriginProblem } from './web-addresses';

const valid = {
  companyName: 'Acme Trading Tools GmbH',
  companyWebsite: 'https://acme.example',
  businessEmail: 'Ops@Acme.example',
  country: 'DE',
  phone: '+49 30 1234567',
  appName: 'Acme Portfolio',
  description: 'Portfolio analytics',
  logoUrl: 'https://acme.example/logo.png',
  homepageUrl: 'https://acme.example',
  supportEmail: 'support@acme.example',
  supportUrl: 'https://acme.example/help',
  privacyPolicyUrl: 'https://acme.example/privacy',
  termsOfServiceUrl: 'https://acme.example/terms',
  redirectUris: ['https://acme.example/oauth/callback', 'http://localhost:3000/callback'],
  scopes: ['read:accounts', 'read:orders'],
};

const problemsOf = (doc: unknown) => {
  const result = validateRegistration(doc);
  return result.ok ? [] : result.problems;
};

describe('registration documents', () => {
  it('accept a complete one, normalising e-mail addresses', () => {
    const result = validateRegistration(valid);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value.businessEmail).toBe('ops@acme.example');
    const { phone: _p, description: _d, supportUrl: _s, ...required } = valid;
    expect(validateRegistration(required).ok).toBe(true);
  });

  it('name every required field that is missing or blank', () => {
    expect(problemsOf({}).map((p) => p.field)).toEqual([
      'companyName',
      'companyWebsite',
      'businessEmail',
      'country',
      'appName',
      'logoUrl',
      'homepageUrl',
      'supportEmail',
      'privacyPolicyUrl',
      'termsOfServiceUrl',
      'redirectUris',
      'scopes',
    ]);
    expect(problemsOf({ ...valid, appName: '   ' })).toEqual([{ field: 'appName', message: 'is required' }]);
    expect(problemsOf([])).toEqual([{ field: '(document)', message: 'must be a JSON object' }]);
  });

  it('check URLs, e-mail addresses, ISO country codes, phone numbers, types and lengths', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ companyWebsite: 'acme.example' }, 'companyWebsite'],
      [{ homepageUrl: 'javascript:alert(1)' }, 'homepageUrl'],
      [{ supportUrl: 'ftp://acme.example' }, 'supportUrl'],
      [{ logoUrl: 'https://user:pw@acme.example/logo.png' }, 'logoUrl'],
      [{ businessEmail: 'ops@' }, 'businessEmail'],
      [{ supportEmail: 'a b@acme.example' }, 'supportEmail'],
      [{ country: 'de' }, 'country'],
      [{ country: 'DEU' }, 'country'],
      [{ country: 'XK' }, 'country'],
      [{ phone: 'ring ring' }, 'phone'],
      [{ appName: 42 }, 'appName'],
      [{ description: 'x'.repeat(1001) }, 'description'],
      [{ redirectUri: ['https://acme.example/cb'] }, 'redirectUri'],
    ];
    for (const [change, field] of cases) expect([field, problemsOf({ ...valid, ...change }).map((p) => p.field)]).toEqual([field, [field]]);
  });

  it('check every redirect URI and scope, naming the item', () => {
    const problems = problemsOf({
      ...valid,
      redirectUris: [
        'https://ok.example/cb',
        'http://evil.example/cb',
        'https://ok.example/cb#x',
        'https://*.example/cb',
        'https://ok.example/cb',
        'nope',
      ],
      scopes: ['read:accounts', 'read:everything', 'read:accounts'],
    });
    expect(problems.map((p) => p.field)).toEqual([
      'redirectUris[1]',
      'redirectUris[2]',
      'redirectUris[3]',
      'redirectUris[4]',
      'redirectUris[5]',
      'scopes[1]',
      'scopes[2]',
    ]);
    expect(problemsOf({ ...valid, redirectUris: [] })[0]).toMatchObject({ field: 'redirectUris' });
    expect(problemsOf({ ...valid, scopes: [] })[0]).toMatchObject({ field: 'scopes' });
  });

  it('allow plain http redirect URIs only on loopback (RFC 9700 §2.1)', () => {
    expect(redirectUriProblem('http://localhost:3000/cb')).toBeNull();
    expect(redirectUriProblem('http://127.0.0.1/cb')).toBeNull();
    expect(redirectUriProblem('http://[::1]:8080/cb')).toBeNull();
    expect(redirectUriProblem('http://localhost.evil.example/cb')).toMatch(/https/);
    expect(redirectUriProblem('https://app.example/cb?tenant=1')).toBeNull();
    expect(validateRedirectUris(['https://a.example/cb', 'https://a.example/cb'])).toEqual({
      ok: false,
      problems: [{ field: 'redirectUris[1]', message: 'is listed twice' }],
    });
  });

  it('take web origins (CORS) as exact origins only: https or loopback http, no path, query, fragment, credentials or wildcard', () => {
    for (const ok of ['https://app.example', 'https://app.example:8443', 'http://localhost:5173', 'http://127.0.0.1', 'http://[::1]:8080'])
      expect([ok, webOriginProblem(ok)]).toEqual([ok, null]);
    const refused: Array<[unknown, RegExp]> = [
      ['http://evil.example', /must use https/],
      ['http://localhost.evil.example', /must use https/],
      ['https://app.example/path', /origin only/],
      ['https://app.example?x=1', /origin only/],
      ['https://app.example#x', /fragment/],
      ['https://user:pw@app.example', /credentials/],
      ['https://*.app.example', /wildcards/],
      ['*', /exact origin/],
      ['null', /exact origin/],
      ['https://app.example/', /as browsers send it in Origin: https:\/\/app\.example$/],
      ['https://APP.example', /as browsers send it/],
      ['https://app.example:443', /as browsers send it/],
      ['ftp://app.example', /https/],
      ['app.example', /absolute URL/],
      [42, /URL/],
    ];
    for (const [value, message] of refused) expect([value, webOriginProblem(value)]).toEqual([value, expect.stringMatching(message)]);
  });

  it('make web origins optional, named by item in a registration, at most 20 and each once', () => {
    expect(validateRegistration(valid)).toMatchObject({ ok: true, value: { webOrigins: [] } });
    expect(validateRegistration({ ...valid, webOrigins: ['https://app.example'] })).toMatchObject({
      ok: true,
      value: { webOrigins: ['https://app.example'] },
    });
    expect(problemsOf({ ...valid, webOrigins: ['https://ok.example', 'http://evil.example', 'https://ok.example'] })).toEqual([
      { field: 'webOrigins[1]', message: expect.stringMatching(/https/) },
      { field: 'webOrigins[2]', message: 'is listed twice' },
    ]);
    expect(problemsOf({ ...valid, webOrigins: 'https://app.example' })).toEqual([{ field: 'webOrigins', message: expect.any(String) }]);
    const many = Array.from({ length: 21 }, (_, i) => `https://app${i}.example`);
    expect(validateWebOrigins(many)).toEqual({ ok: false, problems: [{ field: 'webOrigins', message: 'must list at most 20 origins' }] });
  });
});

describe('client authentication and policy (FAPI 2.0)', () => {
  const { generateKeyPairSync } = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  const publicJwk = (type: 'ec' | 'rsa' | 'ed25519') => {
    const pair =
      type === 'ec'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : type === 'rsa'
          ? generateKeyPairSync('rsa', { modulusLength: 2048 })
          : generateKeyPairSync('ed25519');
    return { pub: pair.publicKey.export({ format: 'jwk' }), priv: pair.privateKey.export({ format: 'jwk' }) };
  };

  it('accept public EC P-256, RSA and Ed25519 keys; refuse private members, other curves and short RSA keys', () => {
    const ec = publicJwk('ec');
    const ok = validateJwks({ keys: [{ ...ec.pub, kid: 'a', alg: 'ES256' }, publicJwk('rsa').pub, publicJwk('ed25519').pub] });
    expect(ok.ok).toBe(true);
    expect(jwkProblem(ec.priv)).toMatch(/private member\(s\) d/);
    expect(jwkProblem({ ...ec.pub, alg: 'RS256' })).toMatch(/alg must be ES256/);
    expect(jwkProblem({ ...ec.pub, crv: 'P-384' })).toMatch(/P-256/);
    expect(jwkProblem({ kty: 'oct', k: 'c2VjcmV0' })).toMatch(/private member/);
    expect(jwkProblem({ ...ec.pub, x: 'AAAA' })).toMatch(/not a valid public key/);
    const short = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
    expect(jwkProblem(short)).toMatch(/2048/);
    expect(validateJwks({ keys: [] })).toEqual({ ok: false, problems: [{ field: 'jwks.keys', message: 'must list 1 to 10 keys' }] });
  });

  it('take the spec profile by default in every environment, PROD too; fapi2 sets PAR, DPoP and private_key_jwt; private_key_jwt needs keys, by value or https URL, not both', () => {
    const spec = {
      ok: true,
      value: {
        tokenEndpointAuthMethod: 'client_secret_basic',
        jwks: null,
        jwksUri: null,
        requirePushedAuthorizationRequests: false,
        dpopBoundAccessTokens: false,
        dpopNonceRequired: false,
        requireSecondFactor: false,
      },
    };
    for (const env of ['DEV', 'UAT', 'PROD'] as const) expect(validateClientPolicy({}, env)).toEqual(spec);
    // The second-factor rule is free beside either profile, and takes the default it is given.
    expect(validateClientPolicy({ profile: 'spec' }, 'PROD', {}, true)).toMatchObject({ value: { requireSecondFactor: true } });
    expect(validateClientPolicy({ profile: 'spec', requireSecondFactor: false }, 'PROD', {}, true)).toMatchObject({
      value: { requireSecondFactor: false },
    });
    expect(validateClientPolicy({ profile: 'fapi2', jwksUri: 'https://keys.example/jwks' }, 'PROD')).toMatchObject({
      value: { tokenEndpointAuthMethod: 'private_key_jwt', requirePushedAuthorizationRequests: true, dpopBoundAccessTokens: true },
    });
    expect(validateClientPolicy({ profile: 'spec', dpopBoundAccessTokens: true }, 'PROD')).toMatchObject({
      problems: [{ field: 'dpopBoundAccessTokens' }],
    });
    const fields = (input: Record<string, unknown>) => {
      const r = validateClientPolicy(input, 'UAT');
      return r.ok ? [] : r.problems.map((p) => p.field);
    };
    expect(fields({ tokenEndpointAuthMethod: 'private_key_jwt' })).toEqual(['jwks']);
    expect(fields({ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'http://keys.example/jwks' })).toEqual(['jwksUri']);
    expect(fields({ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.example/jwks' })).toEqual([]);
    expect(fields({ jwks: { keys: [publicJwk('ec').pub] }, jwksUri: 'https://keys.example/jwks' })).toEqual(['jwksUri']);
    expect(fields({ tokenEndpointAuthMethod: 'none', requirePushedAuthorizationRequests: 'yes' })).toEqual([
      'tokenEndpointAuthMethod',
      'requirePushedAuthorizationRequests',
    ]);
    expect(problemsOf({ ...valid, tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [publicJwk('ec').priv] } })).toEqual([
      { field: 'jwks.keys[0]', message: expect.stringMatching(/public key/) },
    ]);
  });

  it('attack: a jwksUri on this network (loopback, private, link-local, metadata) is refused; loopback only where allowed', () => {
    const problem = (uri: string, rules = {}) => jwksUriProblem(uri, rules);
    for (const uri of [
      'https://127.0.0.1/jwks',
      'https://127.1/jwks',
      'https://0x7f000001/jwks',
      'https://localhost:8443/jwks',
      'https://keys.localhost/jwks',
      'https://[::1]/jwks',
      'https://[::ffff:127.0.0.1]/jwks',
      'https://10.0.0.8/jwks',
      'https://192.168.1.10/jwks',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/jwks',
      'https://[fe80::1]/jwks',
      'https://100.100.100.200/jwks',
      'https://0.0.0.0/jwks',
    ])
      expect([uri, problem(uri)]).toEqual([
        uri,
        expect.stringMatching(/^must be a public https URL: .* is a non-public address \(.*\), and auth fetches only from public ones$/),
      ]);
    expect(problem('https://127.0.0.1:8443/jwks', { allowLoopback: true })).toBeNull();
    expect(problem('https://localhost:8443/jwks', { allowLoopback: true })).toBeNull();
    expect(problem('https://169.254.169.254/jwks', { allowLoopback: true })).toMatch(/link-local/);
    expect(problem('https://10.0.0.8/jwks', { allowLoopback: true })).toMatch(/private/);
    expect(problem('http://localhost:8443/jwks', { allowLoopback: true })).toMatch(/https/);
    expect(problem('https://keys.vendor.example/jwks')).toBeNull();
    expect(problem('https://93.184.215.14/jwks')).toBeNull();
  });
});

describe('vendor text', () => {
  const { generateKeyPairSync } = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  const hostile = ['\u001b[2J', '\u0007', '\u009b', '\u007f', '\u202e', '\u2066', '\u200f', '\u061c', '\n'];

  it('attack: control and bidi characters are refused in every text field, naming the field', () => {
    const textFields = ['companyName', 'appName', 'description', 'businessEmail', 'supportEmail', 'phone'];
    const urlFields = ['companyWebsite', 'logoUrl', 'homepageUrl', 'supportUrl', 'privacyPolicyUrl', 'termsOfServiceUrl'];
    for (const c of hostile)
      for (const field of [...textFields, ...urlFields]) {
        const value = urlFields.includes(field)
          ? `https://acme.example/${c}x`
          : field === 'phone'
            ? `+49 30${c}1234567`
            : field.endsWith('Email')
              ? `ops${c}@acme.example`
              : `Acme${c}Trusted Bank Ltd ACTIVE`;
        expect([field, problemsOf({ ...valid, [field]: value })]).toEqual([
          field,
          [{ field, message: expect.stringMatching(/^must not contain control characters or bidirectional-text controls \(found U+/) }],
        ]);
      }
    expect(problemsOf({ ...valid, appName: 'Acme\u001b]0;pwned\u0007' })).toEqual([
      { field: 'appName', message: 'must not contain control characters or bidirectional-text controls (found U+001B)' },
    ]);
    expect(problemsOf({ ...valid, redirectUris: ['https://acme.example/cb', 'https://acme.example/\u202ebc'] })).toEqual([
      { field: 'redirectUris[1]', message: expect.stringContaining('U+202E') },
    ]);
    expect(problemsOf({ ...valid, webOrigins: ['https://acme.example\u0007'] })).toEqual([
      { field: 'webOrigins[0]', message: expect.stringContaining('U+0007') },
    ]);
    expect(problemsOf({ ...valid, tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.acme.example/\u001b[31m' })).toEqual([
      { field: 'jwksUri', message: expect.stringContaining('U+001B') },
    ]);
    const jwk = { ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }), kid: 'k\u001b[1A' };
    expect(problemsOf({ ...valid, tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [jwk] } })).toEqual([
      { field: 'jwks.keys[0]', message: expect.stringContaining('kid must not contain control characters') },
    ]);
    // Any script is text.
    expect(
      problemsOf({ ...valid, companyName: 'Zürich Börse AG – 株式会社', appName: 'تداول', description: 'Ünïcödé – “quoted”' }),
    ).toEqual([]);
  });

  it('refuses them in what a promotion brings too', () => {
    expect(validateRedirectUris(['https://uat.acme.example/cb\u0007'])).toMatchObject({
      ok: false,
      problems: [{ field: 'redirectUris[0]' }],
    });
    const pages = { logoUrl: 'https://a.example/l', privacyPolicyUrl: 'https://a.example/p', termsOfServiceUrl: 'https://a.example/t' };
    expect(validatePublicPages(pages, { logoUrl: 'https://a.example/\u202el.png' })).toMatchObject({
      ok: false,
      problems: [{ field: 'logoUrl', message: expect.stringContaining('U+202E') }],
    });
  });
});
