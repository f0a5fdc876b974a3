import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { adminCli } from '../support/admin-cli';
import { dpopCall, DpopKey, freePort } from '../support/dpop-helpers';
import {
  assertionParams,
  authorizationParams,
  clientAssertion,
  clientKey,
  consentByRequestUri,
  pushRequest,
} from '../support/oauth-fapi-helpers';
import {
  admin,
  authorizationCode,
  extraAuth,
  provisionApp,
  registration,
  tokenRequest,
  tokensFor,
  UserAgent,
  type ProvisionedApp,
} from '../support/oauth-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

interface Step {
  name: string;
  [detail: string]: unknown;
}

/** Runs one of the oauth4webapi clients (an ES module, in its own process), answering what it asks. */
async function runClient(
  script: string,
  answer: (message: { type: string; url?: string }) => Promise<Record<string, unknown>>,
): Promise<Record<string, Step>> {
  const child = fork(join(__dirname, '../support/fapi-client', script), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [],
  });
  const outcome = await new Promise<{ type: string; report?: { steps: Step[] }; error?: string; cause?: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the client exited (${code})`)));
    child.on('message', (message: any) => {
      if (message.type === 'done' || message.type === 'failed') return resolve(message);
      answer(message).then((reply) => child.send(reply), reject);
    });
  }).finally(() => child.kill());
  if (outcome.type !== 'done') throw new Error(`the client failed: ${outcome.error}\n${outcome.cause ?? ''}`);
  return Object.fromEntries(outcome.report!.steps.map((s) => [s.name, s]));
}

/**
 * Two OAuth profiles, each complete and chosen explicitly: `spec` (client secret, Bearer tokens,
 * a plain authorization request) by default in every environment, so a vendor built to the seed
 * spec keeps working after promotion to PROD; `fapi2` (PAR, DPoP, private_key_jwt, codes bound
 * to the DPoP key). Credentials that follow neither are a legacy mix that `apps show` warns about.
 */
describe('OAuth profiles', () => {
  let p: TestPlatform;
  let api: string;

  beforeAll(async () => {
    const facadePort = await freePort();
    p = await startTestPlatform({ FACADE_PORT: String(facadePort) });
    api = `http://localhost:${facadePort}/v1`;
  }, 60_000);
  afterAll(() => p?.stop());

  /** DEV → UAT → PROD with `policy` at the last step; the PROD credentials. */
  async function promoteToProd(app: ProvisionedApp, policy?: Record<string, unknown>): Promise<ProvisionedApp> {
    const uat = await admin(p, 'POST', `/apps/${app.appId}/promote`, { redirectUris: ['https://uat.vendor.example/callback'] });
    expect(uat.status).toBe(201);
    const redirectUri = 'https://prod.vendor.example/callback';
    const prod = await admin(p, 'POST', `/apps/${app.appId}/promote`, { redirectUris: [redirectUri], ...(policy ? { policy } : {}) });
    expect(prod.status).toBe(201);
    return { appId: app.appId, clientId: prod.body.clientId, clientSecret: prod.body.clientSecret, redirectUri };
  }

  it("the seed spec's quickstart flow (oauth4webapi, client_secret_basic, Bearer) works against a PROD app of the default profile", async () => {
    const prod = await promoteToProd(await provisionApp(p, { scopes: ['read:accounts'] }));
    const shown = await adminCli(p, ['apps', 'show', '--app', prod.clientId]);
    expect(shown.stdout).toMatch(/PROD tci_prod_\w+ {2}profile: spec/);
    expect(shown.stdout).not.toMatch(/warning/);

    const prodAuth = await extraAuth(p, { APP_ENV: 'PROD', SMTP_URL: 'smtp://127.0.0.1:9' });
    try {
      const steps = await runClient('quickstart-client.mjs', async (message) => {
        if (message.type === 'ready')
          return {
            issuer: `http://localhost:${p.config.AUTH_PORT}`,
            authUrl: prodAuth.url,
            api,
            clientId: prod.clientId,
            clientSecret: prod.clientSecret,
            redirectUri: prod.redirectUri,
          };
        // The person's browser: the authorization endpoint sends it to sign in, then to consent.
        const target = new URL(message.url!);
        const start = await fetch(target, { redirect: 'manual' });
        const login = new URL(start.headers.get('location')!, target);
        const ua = new UserAgent(prodAuth.url);
        const page = await ua.open(`${login.pathname}${login.search}`, alice);
        const answer = await ua.answer(page, 'approve');
        return { callback: answer.location! };
      });
      expect(steps['token']).toMatchObject({ tokenType: 'bearer', hasRefresh: true });
      expect(steps['api']).toMatchObject({ status: 200 });
      expect(steps['refresh']).toMatchObject({ tokenType: 'bearer', api: 200 });
    } finally {
      await prodAuth.close();
    }
  }, 90_000);

  it('fapi2 is chosen at promotion whole (PAR, DPoP, private_key_jwt); the spec profile refuses FAPI settings; a mix is named and warned about until moved', async () => {
    const key = await clientKey('ES256');
    const app = await provisionApp(p, { scopes: ['read:accounts'] });
    await admin(p, 'POST', `/apps/${app.appId}/promote`, { redirectUris: ['https://uat.vendor.example/callback'] });
    const jwksFile = join(tmpdir(), `jwks-${app.appId}.json`);
    writeFileSync(jwksFile, JSON.stringify({ keys: [key.jwk] }));
    const promoted = await adminCli(p, [
      'apps',
      'promote',
      '--app',
      app.appId,
      '--redirect-uri',
      'https://prod.vendor.example/callback',
      '--profile',
      'fapi2',
      '--jwks-file',
      jwksFile,
      '--dpop-nonce',
      '--json',
    ]);
    expect(promoted.code).toBe(0);
    expect(JSON.parse(promoted.stdout)).toMatchObject({
      environment: 'PROD',
      profile: 'fapi2',
      tokenEndpointAuthMethod: 'private_key_jwt',
      requirePushedAuthorizationRequests: true,
      dpopBoundAccessTokens: true,
      dpopNonceRequired: true,
    });

    // The spec profile with a FAPI setting, and fapi2 with a secret: refused, naming the field.
    const other = await provisionApp(p, { scopes: ['read:accounts'] });
    const specWithPar = await admin(p, 'POST', '/apps', {
      registration: { ...registration({ scopes: ['read:accounts'] }), profile: 'spec', requirePushedAuthorizationRequests: true },
    });
    expect([specWithPar.status, specWithPar.body.problems]).toEqual([
      422,
      [{ field: 'requirePushedAuthorizationRequests', message: 'is false in the spec profile' }],
    ]);
    const fapiWithSecret = await admin(p, 'POST', '/apps', {
      registration: { ...registration({ scopes: ['read:accounts'] }), profile: 'fapi2', tokenEndpointAuthMethod: 'client_secret_basic' },
    });
    expect([fapiWithSecret.status, fapiWithSecret.body.problems[0].field]).toEqual([422, 'tokenEndpointAuthMethod']);

    // Flags set one by one to a mix (as PROD promotions used to default to): named, and warned about.
    const mixed = await promoteToProd(other, { requirePushedAuthorizationRequests: true, dpopBoundAccessTokens: true });
    const warned = await adminCli(p, ['apps', 'show', '--app', mixed.clientId]);
    expect(warned.stdout).toMatch(/PROD tci_prod_\w+ {2}profile: legacy-mix/);
    expect(warned.stdout).toMatch(/warning: These credentials follow neither OAuth profile/);
    const moved = await adminCli(p, ['apps', 'set-profile', '--app', mixed.clientId, '--env', 'PROD', '--profile', 'spec']);
    expect([moved.code, moved.stdout.trim()]).toEqual([0, expect.stringMatching(/now follows the spec profile$/)]);
    const after = await adminCli(p, ['apps', 'show', '--app', mixed.appId]);
    expect(after.stdout).toMatch(/PROD tci_prod_\w+ {2}profile: spec/);
    expect(after.stdout).not.toMatch(/warning/);
  }, 60_000);

  describe('RFC 7009: revoking another client’s token', () => {
    it('attack: another client revoking a refresh or access token is refused (unauthorized_client), and the token keeps working', async () => {
      const owner = await provisionApp(p, { scopes: ['read:accounts'] });
      const stranger = await provisionApp(p, { scopes: ['read:accounts'] });
      const tokens = await tokensFor(p, owner, alice);
      for (const token of [tokens.refresh_token, tokens.access_token]) {
        const res = await tokenRequest(`${api}/oauth/revoke`, { token }, { form: true, basic: [stranger.clientId, stranger.clientSecret] });
        expect([res.status, res.body.error]).toEqual([400, 'unauthorized_client']);
      }
      expect((await http('GET', `${api}/accounts`, { token: tokens.access_token })).status).toBe(200);
      // Unknown tokens still get 200 (§2.2), and the owner may revoke its own.
      const unknown = await tokenRequest(
        `${api}/oauth/revoke`,
        { token: 'trt_' + 'x'.repeat(43) },
        { form: true, basic: [stranger.clientId, stranger.clientSecret] },
      );
      expect(unknown.status).toBe(200);
      const own = await tokenRequest(
        `${api}/oauth/revoke`,
        { token: tokens.refresh_token },
        { form: true, basic: [owner.clientId, owner.clientSecret] },
      );
      expect(own.status).toBe(200);
      expect((await http('GET', `${api}/accounts`, { token: tokens.access_token })).status).toBe(401);
    });
  });

  describe('DPoP as RFC 9449 says', () => {
    it('a request without credentials is offered DPoP (with its algorithms) beside Bearer', async () => {
      const res = await http('GET', `${api}/accounts`);
      expect(res.status).toBe(401);
      const challenge = res.headers.get('www-authenticate')!;
      expect(challenge).toMatch(/^Bearer realm="trading-api"/);
      expect(challenge).toMatch(/DPoP realm="trading-api", algs="ES256 EdDSA PS256"/);
    });

    it('htu is compared after RFC 3986 normalisation: %61ccounts, %74oken and an upper-case host name the same URLs', async () => {
      const app = await provisionApp(p, { scopes: ['read:accounts'] });
      const key = await DpopKey.generate();
      const c = await authorizationCode(p, app, alice);
      const tokenUrl = `${api}/oauth/token`;
      const issued = await http('POST', tokenUrl, {
        body: {
          grant_type: 'authorization_code',
          code: c.code,
          redirect_uri: c.redirectUri,
          code_verifier: c.verifier,
          client_id: app.clientId,
          client_secret: app.clientSecret,
        },
        headers: { dpop: await key.proof('POST', tokenUrl.replace('/oauth/token', '/oauth/%74oken').replace('localhost', 'LOCALHOST')) },
      });
      expect([issued.status, issued.body.token_type]).toEqual([200, 'DPoP']);
      const token = issued.body.access_token as string;
      const ok = await dpopCall('GET', `${api}/accounts`, token, await key.proof('GET', `${api}/%61ccounts`, { accessToken: token }));
      expect(ok.status).toBe(200);
      // Normalisation never makes another path match.
      const other = await dpopCall('GET', `${api}/accounts`, token, await key.proof('GET', `${api}/%62ccounts`, { accessToken: token }));
      expect(other.status).toBe(401);
    });

    it('attack: a code pushed with dpop_jkt is redeemed only with a proof of that key; a proof at PAR binds the code the same way', async () => {
      const key = await clientKey('ES256');
      const app = await provisionApp(p, {
        scopes: ['read:accounts'],
        profile: 'fapi2',
        jwks: { keys: [key.jwk] },
      });
      const parUrl = `${api}/oauth/par`;
      const tokenUrl = `${api}/oauth/token`;
      const assertion = async () => assertionParams(await clientAssertion(key, app.clientId, `http://localhost:${p.config.AUTH_PORT}`));
      const owner = await DpopKey.generate();
      const thief = await DpopKey.generate();

      // fapi2: a pushed request that binds no key is refused.
      const unbound = authorizationParams(app);
      const refused = await pushRequest(parUrl, { ...unbound.params, ...(await assertion()) });
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_dpop_proof']);

      const redeem = async (code: string, verifier: string, key: DpopKey) =>
        http('POST', tokenUrl, {
          body: { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, code_verifier: verifier, ...(await assertion()) },
          headers: { dpop: await key.proof('POST', tokenUrl) },
        });

      for (const how of ['dpop_jkt', 'proof at PAR'] as const) {
        const { params, verifier } = authorizationParams(app, how === 'dpop_jkt' ? { dpop_jkt: owner.jkt } : {});
        const pushed =
          how === 'dpop_jkt'
            ? await pushRequest(parUrl, { ...params, ...(await assertion()) })
            : await http('POST', parUrl, {
                body: new URLSearchParams({ ...params, ...(await assertion()) }).toString(),
                headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await owner.proof('POST', parUrl) },
              });
        expect(pushed.status).toBe(201);
        const { back } = await consentByRequestUri(p, app.clientId, pushed.body.request_uri, alice);
        const code = back!.searchParams.get('code')!;

        const stolen = await redeem(code, verifier, thief);
        expect([how, stolen.status, stolen.body.error]).toEqual([how, 400, 'invalid_dpop_proof']);
        expect(stolen.body.access_token).toBeUndefined();
        const own = await redeem(code, verifier, owner);
        expect([how, own.status, own.body.token_type]).toEqual([how, 200, 'DPoP']);
      }
    });

    it("a per-app server nonce set at registration is required of that app's proofs (use_dpop_nonce, then accepted)", async () => {
      const app = await provisionApp(p, { scopes: ['read:accounts'], dpopNonceRequired: true });
      const key = await DpopKey.generate();
      const c = await authorizationCode(p, app, alice);
      const tokenUrl = `${api}/oauth/token`;
      const exchange = async (nonce?: string) =>
        http('POST', tokenUrl, {
          body: {
            grant_type: 'authorization_code',
            code: c.code,
            redirect_uri: c.redirectUri,
            code_verifier: c.verifier,
            client_id: app.clientId,
            client_secret: app.clientSecret,
          },
          headers: { dpop: await key.proof('POST', tokenUrl, nonce ? { nonce } : {}) },
        });
      const first = await exchange();
      expect([first.status, first.body.error]).toEqual([400, 'use_dpop_nonce']);
      const nonce = first.headers.get('dpop-nonce')!;
      expect(nonce).toBeTruthy();
      const second = await exchange(nonce);
      expect([second.status, second.body.token_type]).toEqual([200, 'DPoP']);
    });
  });
});
