import { MemoryStore } from '@trading/redis';
import { generateKeyPair, jwtVerify, SignJWT } from 'jose';
import { accountsClaim, assertReachesAccount, reachesAccount } from './claims';
import { EdgeAuthenticator } from './edge';
import { CLIENT_ADDRESS_SUBJECT, InternalClaimsSigner, InternalClaimsVerifier } from './internal-claims';
import { exportServiceKey, generateServiceKey, parseServiceKey, TrustedServiceKeys } from './service-identity';
import { ipAllowed, isIpOrCidr } from './ip';
import { methodAllowedFor, missingScopes, SCOPE_DESCRIPTIONS, SCOPES, scopesForPatAccess, UNRESTRICTED_SCOPES } from './scopes';
import { SessionStore } from './sessions';

describe('IP restrictions', () => {
  it('matches addresses and CIDR ranges in both families', () => {
    expect(ipAllowed('203.0.113.7', [])).toBe(true);
    expect(ipAllowed('203.0.113.7', ['203.0.113.7'])).toBe(true);
    expect(ipAllowed('::ffff:203.0.113.7', ['203.0.113.0/24'])).toBe(true);
    expect(ipAllowed('203.0.114.1', ['203.0.113.0/24'])).toBe(false);
    expect(ipAllowed('2001:db8::1', ['2001:db8::/32'])).toBe(true);
    expect(ipAllowed('2001:db9::1', ['2001:db8::/32'])).toBe(false);
    expect(ipAllowed(undefined, ['127.0.0.1'])).toBe(false);
  });
  it('validates list entries', () => {
    expect(isIpOrCidr('10.0.0.0/8')).toBe(true);
    expect(isIpOrCidr('10.0.0.0/33')).toBe(false);
    expect(isIpOrCidr('example.com')).toBe(false);
    expect(isIpOrCidr('::1/128')).toBe(true);
    expect(isIpOrCidr('2001:db8::ffff:203.0.113.7')).toBe(true);
    // Refused in both places the rule runs (the server and the dashboard's bundled script).
    for (const bad of ['10.0.0.01', '256.1.1.1', 'fe80::1%eth0', '2001:db8::/129', '1.2.3.4/8/8', '::1/x', ''])
      expect({ bad, ok: isIpOrCidr(bad) }).toEqual({ bad, ok: false });
  });
});

describe('API scopes', () => {
  it('are the seven the API documents, each with the line apps and users are shown', () => {
    expect(SCOPE_DESCRIPTIONS).toEqual({
      'read:accounts': 'See accounts, positions, margin and portfolios',
      'write:accounts': 'Manage account settings (PAT revocation)',
      'read:orders': 'See order rules, orders, trades and live order events; preview orders',
      'write:orders': 'Place and cancel orders',
      'read:banking': 'See cash balances and activity',
      'write:banking': 'Deposit, withdraw and cancel transfers',
      'read:market': 'See market data: quotes, price bars, the market clock and calendar, instruments and live prices',
    });
    expect(Object.keys(SCOPE_DESCRIPTIONS)).toEqual([...SCOPES]);
  });

  it('let any registered app ask for market data only without being approved for it', () => {
    expect(UNRESTRICTED_SCOPES).toEqual(['read:market']);
  });

  it('name the scopes a caller lacks, in the order required', () => {
    expect(missingScopes(['read:orders'], ['write:orders', 'read:orders', 'read:banking'])).toEqual(['write:orders', 'read:banking']);
    expect(missingScopes(['read:orders', 'write:orders'], ['write:orders'])).toEqual([]);
  });
});

describe('PAT access scopes', () => {
  it('READ_ONLY carries exactly the read scopes, READ_WRITE every scope', () => {
    expect(scopesForPatAccess('READ_ONLY')).toEqual(['read:accounts', 'read:orders', 'read:banking', 'read:market']);
    expect(scopesForPatAccess('READ_WRITE')).toEqual([...SCOPES]);
  });

  it('READ_ONLY may use GET, HEAD and OPTIONS in any case, and no other method; other tokens any method', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'options', 'head']) expect(methodAllowedFor('READ_ONLY', method)).toBe(true);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'delete']) expect(methodAllowedFor('READ_ONLY', method)).toBe(false);
    for (const method of ['POST', 'PATCH']) {
      expect(methodAllowedFor('READ_WRITE', method)).toBe(true);
      expect(methodAllowedFor(undefined, method)).toBe(true);
    }
  });

  it('READ_ONLY gets read scopes and safe methods only', () => {
    expect(scopesForPatAccess('READ_ONLY').every((s) => s.startsWith('read:'))).toBe(true);
    expect(scopesForPatAccess('READ_WRITE')).toHaveLength(7);
    expect(scopesForPatAccess('READ_ONLY')).toContain('read:market');
    expect(methodAllowedFor('READ_ONLY', 'GET')).toBe(true);
    expect(methodAllowedFor('READ_ONLY', 'post')).toBe(false);
    expect(methodAllowedFor('READ_WRITE', 'DELETE')).toBe(true);
  });
});

describe('accounts a token was given', () => {
  const A = '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01';
  const B = '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a02';

  it('reaches every account without a list, only the listed ones with one (whatever the case of the id), none with an empty one', () => {
    expect([reachesAccount({}, A), reachesAccount({}, B)]).toEqual([true, true]);
    expect([
      reachesAccount({ accounts: [A] }, A),
      reachesAccount({ accounts: [A] }, A.toUpperCase()),
      reachesAccount({ accounts: [A] }, B),
    ]).toEqual([true, true, false]);
    expect(reachesAccount({ accounts: [] }, A)).toBe(false);
  });

  it('refuses another account with 403 FORBIDDEN naming the field, and says which account and what to do', () => {
    expect(() => assertReachesAccount({ accounts: [A] }, A)).not.toThrow();
    expect(() => assertReachesAccount({}, B)).not.toThrow();
    expect(() => assertReachesAccount({ accounts: [A] }, B)).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN', status: 403, field: 'accountId', message: expect.stringContaining(B) }),
    );
    expect(() => assertReachesAccount({ accounts: [A] }, B, 'id')).toThrow(expect.objectContaining({ field: 'id' }));
    expect(() => assertReachesAccount({ accounts: [A] }, B)).toThrow(/can add it to the app's or token's accounts/);
  });

  it('reads the claim as signed: absent, or a list of at most 1000 account ids; anything else is malformed (null)', () => {
    expect(accountsClaim(undefined)).toBeUndefined();
    expect(accountsClaim([A, B])).toEqual([A, B]);
    expect(accountsClaim([])).toEqual([]);
    for (const bad of [null, A, [A, 7], [[A]], ['not-an-id'], [`z${A}`], [`${A}z`], { 0: A }, Array(1001).fill(A)])
      expect(accountsClaim(bad)).toBeNull();
    expect(accountsClaim(Array(1000).fill(A))).toHaveLength(1000);
  });
});

describe('internal claims header', () => {
  const facade = generateServiceKey('rest-facade');
  const oms = generateServiceKey('oms');
  const trusted = TrustedServiceKeys.of(facade, oms);
  const claims = { sub: 'u1', sid: 's1', kind: 'pat' as const, scope: ['read:accounts'], access: 'READ_ONLY' as const };

  it('round-trips between the services the trust table allows, and names the sender', async () => {
    const header = await new InternalClaimsSigner(facade).sign(claims, 'gateway');
    expect(await new InternalClaimsVerifier('gateway', trusted).verify(header)).toMatchObject({ ...claims, caller: 'rest-facade' });
    // A token limited to chosen accounts stays limited on every hop; a malformed list is refused, not dropped (which would widen it).
    const limited = { ...claims, accounts: ['0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01'] };
    const limitedHeader = await new InternalClaimsSigner(facade).sign(limited, 'gateway');
    expect(await new InternalClaimsVerifier('gateway', trusted).verify(limitedHeader)).toMatchObject({ accounts: limited.accounts });
    const malformed = await new InternalClaimsSigner(facade).sign({ ...claims, accounts: 'all' as unknown as string[] }, 'gateway');
    expect(await new InternalClaimsVerifier('gateway', trusted).verify(malformed)).toBeNull();
    expect(await new InternalClaimsVerifier('gateway', trusted).verify(header)).not.toHaveProperty('accounts');
    expect(await new InternalClaimsVerifier('gateway', trusted).verify(undefined)).toBeNull();
    expect(await new InternalClaimsVerifier('gateway', trusted).verify('not.a.jwt')).toBeNull();
  });

  it("refuses another audience, an untrusted sender, a key it does not know and scopes beyond the sender's ceiling", async () => {
    const toGateway = await new InternalClaimsSigner(facade).sign(claims, 'gateway');
    expect(await new InternalClaimsVerifier('accounts', trusted).verify(toGateway)).toBeNull();
    // The OMS may not address the gateway at all, and may read accounts only.
    expect(
      await new InternalClaimsVerifier('gateway', trusted).verify(await new InternalClaimsSigner(oms).sign(claims, 'gateway')),
    ).toBeNull();
    expect(
      await new InternalClaimsVerifier('accounts', trusted).verify(await new InternalClaimsSigner(oms).sign(claims, 'accounts')),
    ).toMatchObject({ caller: 'oms' });
    expect(
      await new InternalClaimsVerifier('accounts', trusted).verify(
        await new InternalClaimsSigner(oms).sign({ ...claims, scope: ['write:accounts'] }, 'accounts'),
      ),
    ).toBeNull();
    const impostor = generateServiceKey('rest-facade');
    expect(
      await new InternalClaimsVerifier('gateway', trusted).verify(await new InternalClaimsSigner(impostor).sign(claims, 'gateway')),
    ).toBeNull();
  });

  it('reuses a signed header for half its life, and remembers a verified one until it expires', async () => {
    const signer = new InternalClaimsSigner(facade, 1);
    const first = await signer.signFor(claims, 'gateway');
    expect(await signer.signFor(claims, 'gateway')).toBe(first);
    expect(await signer.signFor({ ...claims, sub: 'u2' }, 'gateway')).not.toBe(first);
    expect(await signer.signFor(claims, 'auth')).not.toBe(first);
    const verifier = new InternalClaimsVerifier('gateway', trusted);
    expect(await verifier.verify(first)).toMatchObject({ sub: 'u1' });
    await new Promise((r) => setTimeout(r, 600));
    expect(await signer.signFor(claims, 'gateway')).not.toBe(first); // half of the 1 s lifetime has passed
    await new Promise((r) => setTimeout(r, 1500));
    expect(await verifier.verify(first)).toBeNull(); // expired: the cache does not outlive the header
  });

  it('keeps client-address headers and claims apart', async () => {
    const address = await new InternalClaimsSigner(facade).signClientAddress('203.0.113.9', 'auth');
    const verifier = new InternalClaimsVerifier('auth', trusted);
    expect(await verifier.verify(address)).toBeNull();
    expect(await verifier.verify(address, 'client-address')).toMatchObject({ sub: CLIENT_ADDRESS_SUBJECT, ip: '203.0.113.9', scope: [] });
  });

  it('parses keys from their JSON forms and says what is wrong without echoing the key', () => {
    const json = exportServiceKey(oms);
    expect(parseServiceKey('oms', json).kid).toBe(oms.kid);
    expect(() => parseServiceKey('banking', json)).toThrow('kid must be "banking.<id>"');
    expect(() => parseServiceKey('oms', '{oops')).toThrow('private EC P-256 JWK');
    expect(() => TrustedServiceKeys.parse(JSON.stringify({ keys: [JSON.parse(json)] }))).toThrow('private key');
    expect(TrustedServiceKeys.parse(JSON.stringify(trusted)).get(oms.kid)?.service).toBe('oms');
  });
});

describe('EdgeAuthenticator', () => {
  const store = new MemoryStore();
  const sessions = new SessionStore(store);
  let sign: (claims: Record<string, unknown>, exp?: string) => Promise<string>;
  let auth: EdgeAuthenticator;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    sign = (claims, exp = '5m') =>
      new SignJWT(claims).setProtectedHeader({ alg: 'ES256' }).setIssuedAt().setExpirationTime(exp).sign(privateKey);
    auth = new EdgeAuthenticator(async (t) => (await jwtVerify(t, publicKey)).payload, sessions);
  });

  const expiresAt = Math.floor(Date.now() / 1000) + 300;
  const live = { userId: 'u1', kind: 'pat' as const, patId: 'p1', expiresAt };
  const patToken = (sid: string, extra: Record<string, unknown> = {}, exp?: string) =>
    sign({ sub: 'u1', sid, kind: 'pat', pat_id: 'p1', scope: 'read:accounts', access: 'READ_ONLY', ...extra }, exp);

  it('accepts a live session and reports the claims its token carries', async () => {
    await sessions.create({ ...live, sid: 'sid-ok' });
    await expect(auth.authenticate(`Bearer ${await patToken('sid-ok')}`, '127.0.0.1')).resolves.toMatchObject({
      sub: 'u1',
      access: 'READ_ONLY',
      patId: 'p1',
      scope: ['read:accounts'],
    });
  });

  it('refuses missing, malformed, expired and revoked tokens, and tokens missing a claim', async () => {
    await expect(auth.authenticate(undefined, '127.0.0.1')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(auth.authenticate('Bearer nonsense', '127.0.0.1')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await sessions.create({ ...live, sid: 'sid-exp' });
    await expect(auth.authenticate(`Bearer ${await patToken('sid-exp', {}, '-1s')}`, '127.0.0.1')).rejects.toThrow('expired');
    await sessions.create({ ...live, sid: 'sid-bare' });
    await expect(auth.authenticate(`Bearer ${await sign({ sub: 'u1', sid: 'sid-bare' })}`, '127.0.0.1')).rejects.toThrow('invalid');
    await expect(auth.authenticate(`Bearer ${await patToken('sid-bare', { access: 'GOD_MODE' })}`, '127.0.0.1')).rejects.toThrow('invalid');
    await sessions.create({ ...live, sid: 'sid-rev' });
    const token = await patToken('sid-rev');
    await sessions.revokePat('p1');
    await expect(auth.authenticate(`Bearer ${token}`, '127.0.0.1')).rejects.toThrow('session has ended');
  });

  it('ends every session of an OAuth grant at once, and only those', async () => {
    const oauth = { userId: 'u1', kind: 'oauth' as const, clientId: 'c1', expiresAt };
    await sessions.create({ ...oauth, sid: 'sid-g1', grantId: 'g1' });
    await sessions.create({ ...oauth, sid: 'sid-g1b', grantId: 'g1' });
    await sessions.create({ ...oauth, sid: 'sid-g2', grantId: 'g2' });
    const [a, b, c] = await Promise.all(
      ['sid-g1', 'sid-g1b', 'sid-g2'].map((sid) => sign({ sub: 'u1', sid, kind: 'oauth', client_id: 'c1', scope: 'read:accounts' })),
    );
    await expect(auth.authenticate(`Bearer ${a}`, '127.0.0.1')).resolves.toMatchObject({ kind: 'oauth', clientId: 'c1' });
    expect(await sessions.revokeGrant('g1')).toBe(3);
    await expect(auth.authenticate(`Bearer ${a}`, '127.0.0.1')).rejects.toThrow('session has ended');
    await expect(auth.authenticate(`Bearer ${b}`, '127.0.0.1')).rejects.toThrow('session has ended');
    await expect(auth.authenticate(`Bearer ${c}`, '127.0.0.1')).resolves.toBeDefined();
  });

  it('enforces the IP list the token carries', async () => {
    await sessions.create({ ...live, patId: 'p2', sid: 'sid-ip' });
    const token = await patToken('sid-ip', { pat_id: 'p2', ip_allow: ['10.1.0.0/16'] });
    await expect(auth.authenticate(`Bearer ${token}`, '10.1.2.3')).resolves.toBeDefined();
    await expect(auth.authenticate(`Bearer ${token}`, '10.2.0.1')).rejects.toMatchObject({ code: 'IP_NOT_ALLOWED' });
  });

  it('attack: a session record widened in Redis (scope, access, IP list) changes nothing; one forged for a made-up sid gives nothing', async () => {
    await sessions.create({ ...live, patId: 'p3', sid: 'sid-narrow' });
    const token = await patToken('sid-narrow', { pat_id: 'p3', ip_allow: ['10.1.0.0/16'] });
    // What an attacker holding Redis would write: the old record shape with everything widened.
    const widened = {
      sid: 'sid-narrow',
      userId: 'u1',
      kind: 'pat',
      patId: 'p3',
      scope: ['read:accounts', 'write:orders'],
      access: 'READ_WRITE',
      ipAllowlist: [],
      expiresAt,
    };
    await store.set('session:sid-narrow', JSON.stringify(widened), 300);
    const claims = await auth.authenticate(`Bearer ${token}`, '10.1.2.3');
    expect(claims).toMatchObject({ access: 'READ_ONLY', scope: ['read:accounts'] });
    await expect(auth.authenticate(`Bearer ${token}`, '203.0.113.9')).rejects.toMatchObject({ code: 'IP_NOT_ALLOWED' });
    // A record for a sid no token names is worthless without auth's signature on a token.
    await store.set('session:made-up', JSON.stringify({ ...widened, sid: 'made-up' }), 300);
    const { privateKey } = await generateKeyPair('ES256');
    const selfSigned = await new SignJWT({
      sub: 'u1',
      sid: 'made-up',
      kind: 'pat',
      pat_id: 'p3',
      scope: 'write:orders',
      access: 'READ_WRITE',
    })
      .setProtectedHeader({ alg: 'ES256' })
      .setExpirationTime('5m')
      .sign(privateKey);
    await expect(auth.authenticate(`Bearer ${selfSigned}`, '10.1.2.3')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});
