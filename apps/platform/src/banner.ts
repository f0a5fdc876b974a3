import type { Platform } from './app';
import { platformLogFile, type PlatformConfig } from './config';
import { DEMO_USERS, DEMO_VENDOR_APP } from './demo-data';

/** What the banner shows of a started platform. */
export interface StartedPlatform {
  urls: Platform['urls'];
  storeKind: string;
  embedded: boolean;
  /** The file holding the demo PAT and vendor secret ('' without demo data): named, never printed. */
  demoCredentials: string;
  processes: number;
}

/**
 * What a newcomer needs after `npm start`: where everything is, the demo users and where the demo's
 * secrets are. Every address it prints opens something in a browser; internal listeners (the
 * subgraphs', signed claims only) and the admin API (the CLI's) are not printed as links.
 */
export function printBanner(config: PlatformConfig, started: StartedPlatform): void {
  // The issuer in every token and in the OAuth metadata is http://localhost:<port>: print the URLs the same way, so discovery from the banner passes the issuer check.
  const local = (url: string) => (config.PLATFORM_BIND === '127.0.0.1' ? url.replace('//127.0.0.1:', '//localhost:') : url);
  const urls = Object.fromEntries(Object.entries(started.urls).map(([k, v]) => [k, local(v)])) as Platform['urls'];
  const logFile =
    config.LOG_FORMAT === 'human'
      ? `\n    Log file      ${platformLogFile(config)}   (JSON lines; warnings and errors are also shown here)`
      : '';
  console.log(`
  Trading API platform is running (all-in-one mode; store: ${started.storeKind}${started.embedded ? ', embedded PostgreSQL' : ''}${started.processes > 1 ? `; ${started.processes} processes, one per core` : ''})

    REST API      ${urls.api}            ({base_url}: an index of the API)
    Login / auth  ${urls.login}           ({login_url}, JWKS at /.well-known/jwks.json)
    API docs      ${urls.api.replace(/\/v1$/, '')}/docs     (OpenAPI 3.1 at ${urls.api}/openapi.json)
    Dashboard     ${urls.login}/en/developer  (PATs, authorised apps; sign in as a demo user)
    GraphQL       ${urls.gateway}   (GraphiQL in a browser)
    Health        /healthz on every port, /readyz on all but the admin API's; /metrics on the internal ports (public + 100)
    Admin API     ${new URL(urls.adminApi).host}   (this machine only: the admin CLI's, not a browser's)${logFile}
${
  started.demoCredentials
    ? `
  Demo users      ${DEMO_USERS.map((u) => `${u.email} / ${u.password}`).join('   ')}
  Demo secrets    ${started.demoCredentials}   (only you can read it)
                  "pat": alice's READ_WRITE PAT (kept while it is live; a new one revokes the old),
                  "clientSecret": the demo vendor app's secret (random for this data directory)

  Try it:
    PAT=$(node -p 'require(${JSON.stringify(started.demoCredentials)}).pat')
    TOKEN=$(curl -s -X POST ${urls.api}/pat/login -H 'content-type: application/json' \\
      -d "{\\"token\\":\\"$PAT\\"}" | node -pe 'JSON.parse(require("fs").readFileSync(0)).token')
    curl -s ${urls.api}/accounts -H "Authorization: Bearer $TOKEN"

  Demo vendor app "${DEMO_VENDOR_APP.registration.appName}" (DEV, OAuth 2.0 + PKCE)
    client_id      ${DEMO_VENDOR_APP.clientId}
    client_secret  "clientSecret" in the file above
    redirect URIs  ${DEMO_VENDOR_APP.registration.redirectUris.join('  ')}
    Try it:        SAMPLE_VENDOR_CLIENT_SECRET=$(node -p 'require(${JSON.stringify(started.demoCredentials)}).clientSecret') npm run sample-vendor
                   then open http://localhost:3000, connect, sign in as alice, allow
    Sign-in page   ${urls.login}/en/signin (or /de/, /fr/: where Connect leads), metadata at ${urls.login}/.well-known/oauth-authorization-server
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
}
