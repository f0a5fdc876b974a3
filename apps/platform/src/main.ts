import { ConfigError } from '@trading/config';
import { createLogger } from '@trading/logging';
import { createPlatform, DEMO_USERS, loadPlatformConfig } from './app';
import { DEMO_VENDOR_APP } from './demo-data';

/** `npm start`: the whole product in one process, then a banner with what a newcomer needs. */
async function main(): Promise<void> {
  const config = loadPlatformConfig();
  const logger = createLogger('platform', config.LOG_LEVEL);
  console.log(
    config.DATABASE_URL ? 'Starting every service…' : `Starting every service (embedded PostgreSQL in ${config.PLATFORM_DATA_DIR})…`,
  );
  const platform = await createPlatform(config, logger);

  let demoPat = '';
  if (config.PLATFORM_SEED_DEMO) {
    const alice = (await platform.auth.users.findByEmail(DEMO_USERS[0]!.email))!;
    const expires = new Date(Date.now() + 30 * 86400_000).toISOString().slice(0, 10);
    demoPat = (
      await platform.auth.pats.create({
        userId: alice.id,
        name: `all-in-one demo ${new Date().toISOString()}`,
        access: 'READ_WRITE',
        expires,
      })
    ).token;
    await platform.auth.registry.ensureDemoApp(DEMO_VENDOR_APP.registration, DEMO_VENDOR_APP.credentials);
  }

  // The issuer in every token and in the OAuth metadata is http://localhost:<port>: print the URLs the same way, so discovery from the banner passes the issuer check.
  const local = (url: string) => (config.PLATFORM_BIND === '127.0.0.1' ? url.replace('//127.0.0.1:', '//localhost:') : url);
  const urls = Object.fromEntries(Object.entries(platform.urls).map(([k, v]) => [k, local(v)])) as typeof platform.urls;
  console.log(`
  Trading API platform is running (all-in-one mode; store: ${platform.store.kind}${platform.embedded ? ', embedded PostgreSQL' : ''})

    REST API      ${urls.api}            ({base_url})
    Login / auth  ${urls.login}           ({login_url}, JWKS at /.well-known/jwks.json)
    API docs      ${urls.api.replace(/\/v1$/, '')}/docs     (OpenAPI 3.1 at ${urls.api}/openapi.json)
    Dashboard     ${urls.login}/en/developer  (PATs, authorised apps; sign in as a demo user)
    GraphQL       ${urls.gateway}
    Subgraphs     ${urls.accounts}  ${urls.banking}  ${urls.oms}   (internal: signed claims only)
    Health        /healthz and /readyz on every port; /metrics on the internal ports (public + 100)
    Admin API     ${urls.adminApi}   (this machine only)
${
  demoPat
    ? `
  Demo users      ${DEMO_USERS.map((u) => `${u.email} / ${u.password}`).join('   ')}
  Demo PAT        ${demoPat}
                  (alice, READ_WRITE, new on every start)

  Try it:
    TOKEN=$(curl -s -X POST ${urls.api}/pat/login -H 'content-type: application/json' \\
      -d '{"token":"${demoPat}"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).token')
    curl -s ${urls.api}/accounts -H "Authorization: Bearer $TOKEN"

  Demo vendor app "${DEMO_VENDOR_APP.registration.appName}" (DEV, OAuth 2.0 + PKCE)
    client_id      ${DEMO_VENDOR_APP.credentials.clientId}
    client_secret  ${DEMO_VENDOR_APP.credentials.clientSecret}
    redirect URIs  ${DEMO_VENDOR_APP.registration.redirectUris.join('  ')}
    Try it:        npm run sample-vendor   then open http://localhost:3000, connect, sign in as alice, allow
    Login page     ${urls.login}/en/login?… (or /de/login), metadata at ${urls.login}/.well-known/oauth-authorization-server
`
    : ''
}
  Admin CLI       npm run admin -- users create --email you@example.com --first-name You --last-name Tester   (asks for the password)
                  npm run admin -- accounts open --email you@example.com --type CASH --currency USD   (then accounts list, close)
                  npm run admin -- instruments list                           (then instruments add, halt, resume)
                  npm run admin -- apps provision --file registration.json   (template: tools/admin/registration.example.json)
                  npm run admin -- keys list                                  (then keys rotate, keys retire --kid …)
                  (admin credential: ${config.AUTH_ADMIN_TOKEN ? 'your AUTH_ADMIN_TOKEN' : `generated for this data directory, in ${config.PLATFORM_DATA_DIR}/admin-token; the CLI finds it`})

  Ctrl-C stops everything.
`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping…');
    await platform.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
