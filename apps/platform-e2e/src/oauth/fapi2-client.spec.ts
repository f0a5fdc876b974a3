import { fork } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { DEMO_USERS } from '@trading/platform';
import { provisionApp, UserAgent } from '../support/oauth-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/** The public URLs (issuer, DPoP htu) must be known before the platform listens. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Step {
  name: string;
  [detail: string]: unknown;
}

/**
 * FAPI 2.0, done as a vendor would: a standards client library (oauth4webapi, in its own
 * process: it is an ES module) runs the FAPI 2.0 flow against the platform — discovery, PAR with
 * private_key_jwt, the person's sign-in and consent (driven here, as their browser), the code
 * exchanged with a DPoP proof, the OpenID Connect id_token validated by the library, REST and
 * GraphQL calls with proofs, a refresh with a proof, revocation. The app requires PAR and DPoP.
 */
describe('FAPI 2.0 with a standards client (oauth4webapi)', () => {
  let p: TestPlatform;
  let urls: { issuer: string; api: string; gateway: string };

  beforeAll(async () => {
    // A port found free can be taken by a parallel suite before the platform listens on it: new ports, up to three times.
    for (let attempt = 1; ; attempt++) {
      const [auth, facade, gateway] = [await freePort(), await freePort(), await freePort()];
      try {
        p = await startTestPlatform({ AUTH_PORT: String(auth), FACADE_PORT: String(facade), GATEWAY_PORT: String(gateway) });
      } catch (err) {
        if (attempt < 3 && (err as { code?: string }).code === 'EADDRINUSE') continue;
        throw err;
      }
      urls = { issuer: `http://localhost:${auth}`, api: `http://localhost:${facade}/v1`, gateway: `http://localhost:${gateway}/graphql` };
      break;
    }
  }, 60_000);
  afterAll(() => p?.stop());

  it('PAR → authorize → token (DPoP, private_key_jwt) → API calls with proofs → refresh → revoke, and an id_token the library validates', async () => {
    const child = fork(join(__dirname, '../support/fapi-client/fapi2-client.mjs'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [],
    });
    const seen: string[] = [];
    const outcome = await new Promise<{ type: string; report?: { steps: Step[] }; error?: string; cause?: string }>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the client exited (${code}) after ${seen.join(', ')}`)));
      child.on('message', (message: any) => {
        seen.push(message.type);
        void (async () => {
          if (message.type === 'ready') child.send(urls);
          else if (message.type === 'register') {
            const app = await provisionApp(p, {
              scopes: ['read:accounts'],
              profile: 'fapi2',
              jwks: { keys: [message.jwk] },
            });
            child.send({ clientId: app.clientId, redirectUri: app.redirectUri, user: alice.email });
          } else if (message.type === 'authorize') {
            // The person's browser: the authorization endpoint sends it to sign in, then to consent.
            const start = await fetch(message.url, { redirect: 'manual' });
            const location = start.headers.get('location');
            if (!location) throw new Error(`the authorization endpoint answered ${start.status}`);
            const ua = new UserAgent(p.urls.login);
            const target = new URL(location, message.url);
            const page = await ua.open(`${target.pathname}${target.search}`, alice);
            const answer = await ua.answer(page, 'approve');
            child.send({ callback: answer.location });
          } else resolve(message);
        })().catch(reject);
      });
    }).finally(() => child.kill());

    if (outcome.type !== 'done') throw new Error(`the client failed: ${outcome.error}\n${outcome.cause ?? ''}`);
    const steps = Object.fromEntries(outcome.report!.steps.map((s) => [s.name, s]));
    expect(steps['discovery']).toMatchObject({
      par: `${urls.api}/oauth/par`,
      dpopAlgs: expect.arrayContaining(['ES256']),
      authMethods: expect.arrayContaining(['private_key_jwt']),
      iss: true,
    });
    expect(steps['par']).toMatchObject({ requestUri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:/), expiresIn: 60 });
    expect(steps['token']).toMatchObject({
      tokenType: 'dpop', // oauth4webapi lower-cases it
      hasRefresh: true,
      idToken: { nonce: true, alg: 'ES256', authTime: 'number', sub: expect.any(String) },
    });
    expect(steps['api']).toMatchObject({ status: 200, accounts: expect.any(Number) });
    expect(steps['graphql']).toMatchObject({ status: 200 });
    expect(steps['bearer']).toMatchObject({ status: 401, challenge: expect.stringMatching(/^DPoP .*error="invalid_token"/) });
    expect(steps['refresh']).toMatchObject({ tokenType: 'dpop', rotated: true, api: 200 });
    // Refused after revocation with a DPoP challenge, as the request was a DPoP one (RFC 9449 §7.1).
    expect(steps['revoke']).toMatchObject({ api: 401, challenge: [expect.objectContaining({ scheme: 'dpop' })] });
  }, 90_000);
});
