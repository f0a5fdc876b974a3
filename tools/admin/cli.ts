/**
 * The service team's admin CLI. It talks to the auth app's admin API, authenticated by the
 * admin credential, so it works the same against a laptop and a deployment.
 *
 *   npm run admin -- users create --email a@b.c --first-name A --last-name B [--json]   (password: typed at the prompt, or on standard input)
 *   npm run admin -- users list [--json]
 *   npm run admin -- pat create --email a@b.c --name ci --scope READ_ONLY --expires 2027-01-31 [--ip 203.0.113.7 --ip 10.0.0.0/8] [--json]
 *   npm run admin -- pat list --email a@b.c [--json]
 *   npm run admin -- pat revoke --email a@b.c --token-id tpat_… [--json]
 *   npm run admin -- apps provision --file registration.json [--approve-scopes read:accounts,read:banking] [--json]
 *                    (the form's fields: tools/admin/registration.example.json)
 *   npm run admin -- apps list [--json]
 *   npm run admin -- apps show --app <appId|clientId> [--json]            each environment's OAuth profile (a legacy mix warns)
 *   npm run admin -- apps promote --app <appId|clientId> --redirect-uri https://… [--redirect-uri …] [--web-origin https://… …] [--to UAT|PROD] [--json]
 *                    [--profile spec|fapi2] (default spec) [--jwks-file keys.json | --jwks-uri https://…] [--dpop-nonce]
 *   npm run admin -- apps set-profile --app <appId|clientId> --env DEV|UAT|PROD --profile spec|fapi2 [--jwks-file … | --jwks-uri …] [--dpop-nonce]
 *   npm run admin -- apps rotate-secret --app <appId|clientId> [--env DEV|UAT|PROD] [--json]
 *   npm run admin -- apps suspend --app <appId|clientId> [--json]
 *   npm run admin -- accounts open --email a@b.c --type CASH|MARGIN --currency USD [--json]
 *   npm run admin -- accounts list --email a@b.c [--json]
 *   npm run admin -- accounts close --account <accountId> [--json]   refused while cash, positions or open orders remain
 *   npm run admin -- instruments list [--json]
 *   npm run admin -- instruments add --symbol ACME --name 'Acme Corp' --currency USD --tick 0.01 [--lot 1] --price 50.00 [--json]
 *   npm run admin -- instruments halt|resume --symbol ACME [--json]
 *   npm run admin -- keys list [--json]                      access-token signing keys
 *   npm run admin -- keys rotate [--json]                    a new key signs; the old one stays published
 *   npm run admin -- keys retire --kid <kid> [--json]        stop publishing an old key
 *
 * Environment: ADMIN_URL (default http://127.0.0.1:8189, auth's admin listener), ADMIN_TOKEN (default: the
 * credential `npm start` generated in its data directory, PLATFORM_DATA_DIR or ~/.local/share/trading-api-platform).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ADMIN_TOKEN_FILE, defaultPlatformDataDir } from '@trading/config';
import { printable, printableDeep, printableJson } from '@trading/errors';

const ADMIN_URL = process.env['ADMIN_URL'] ?? 'http://127.0.0.1:8189';

/**
 * Everything the CLI writes goes through these two: control and bidi characters are shown as
 * escapes, whatever their source (an app's name, a server's message, the command line), since a
 * terminal acts on them: it would draw rows that are not there, or change its title.
 */
const say = (text: string) => console.log(printable(text, { keepLineBreaks: true }));
const complain = (text: string) => console.error(printable(text, { keepLineBreaks: true }));

/** Times as everywhere a person reads one: `YYYY-MM-DD HH:MM UTC` (the API's ISO instants, shortened). */
const isoMinute = (iso: string) => `${iso.replace('T', ' ').slice(0, 16)} UTC`;

const adminTokenFile = () => join(process.env['PLATFORM_DATA_DIR'] || defaultPlatformDataDir(), ADMIN_TOKEN_FILE);
/** Where the credential came from, for an error that says which one was refused. */
const credentialSource = () => (process.env['ADMIN_TOKEN'] ? 'ADMIN_TOKEN' : adminTokenFile());

/** ADMIN_TOKEN, or the all-in-one mode's generated credential; never a built-in default. */
function adminToken(): string {
  const given = process.env['ADMIN_TOKEN'];
  if (given) return given;
  const file = adminTokenFile();
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    complain(
      `no admin credential: set ADMIN_TOKEN (a deployment's AUTH_ADMIN_TOKEN), or start the all-in-one platform first (npm start writes ${file})`,
    );
    process.exit(2);
  }
}

const USAGE = `usage: npm run admin -- <command> [options]   (ADMIN_URL, ADMIN_TOKEN select the deployment)
  admin users create --email <e-mail> --first-name <name> --last-name <name> [--json]
                     the password is typed at a prompt (not shown), or read from standard input:
                     printf '%s' "$PASSWORD" | npm run admin -- users create …
  admin users list [--json]
  admin pat create --email <user e-mail> --name <label> --scope READ_ONLY|READ_WRITE --expires YYYY-MM-DD [--ip <address or CIDR>]... [--json]
  admin pat list --email <user e-mail> [--json]
  admin pat revoke --email <user e-mail> --token-id <tpat_…> [--json]
  admin apps provision --file <registration.json> [--approve-scopes <scope,scope>] [--json]
                       (every field of the form, by its JSON key: tools/admin/registration.example.json)
  admin apps list [--json]
  admin apps promote --app <appId|clientId> --redirect-uri <url> [--redirect-uri <url>]... [--to UAT|PROD]
                     [--web-origin <https://host[:port]>]...   (pages allowed to call the API from a browser, CORS)
                     [--logo-url <https url>] [--privacy-policy-url <https url>] [--terms-of-service-url <https url>]
                     [--profile spec|fapi2]   (spec: client secret, Bearer tokens, plain authorize; the default everywhere.
                                               fapi2: FAPI 2.0, PAR + DPoP + private_key_jwt, needs the keys below)
                     [--jwks-file <public JWK Set .json> | --jwks-uri <https url>]   (private_key_jwt's keys)
                     [--dpop-nonce]   (every DPoP proof must carry the server's nonce) [--json]
  admin apps show --app <appId|clientId> [--json]
  admin apps set-profile --app <appId|clientId> --env DEV|UAT|PROD --profile spec|fapi2 [--jwks-file <.json> | --jwks-uri <url>] [--dpop-nonce] [--json]
  admin apps rotate-secret --app <appId|clientId> [--env DEV|UAT|PROD] [--json]
  admin apps suspend --app <appId|clientId> [--json]
  admin accounts open --email <user e-mail> --type CASH|MARGIN --currency <ISO 4217> [--json]
  admin accounts list --email <user e-mail> [--json]
  admin accounts close --account <accountId> [--json]
  admin instruments list [--json]
  admin instruments add --symbol <symbol> --name <name> --currency <ISO 4217> --tick <tick size> [--lot <lot size>] --price <price>
                        [--min-quantity <q>] [--max-quantity <q>] [--json]
  admin instruments halt --symbol <symbol> [--json]
  admin instruments resume --symbol <symbol> [--json]
  admin keys list [--json]
  admin keys rotate [--json]
  admin keys retire --kid <kid> [--json]`;

class UsageError extends Error {}
class HelpRequested extends Error {}

/** The password without echo at a terminal, or all of standard input when piped (one trailing newline dropped). */
async function readPassword(): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = '';
    for await (const chunk of stdin) text += String(chunk);
    return text.replace(/\r?\n$/, '');
  }
  process.stderr.write('Password (at least 12 characters, not shown): ');
  return new Promise((resolve) => {
    let value = '';
    const finish = () => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      resolve(value);
    };
    const onData = (chunk: string) => {
      for (const c of chunk) {
        if (c === '\r' || c === '\n') return finish();
        if (c === '\u0003') {
          stdin.setRawMode(false);
          process.exit(130);
        }
        value = c === '\u007f' ? value.slice(0, -1) : value + c;
      }
    };
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    stdin.resume();
    stdin.on('data', onData);
  });
}

interface Command {
  method?: 'GET' | 'POST';
  path: string;
  body: Record<string, unknown>;
  /** Ask for the password (prompt or standard input) and send it as body.password. */
  password?: boolean;
  /** The part of the answer this command is about (undefined: nothing matched, said on stderr). */
  select?(result: Record<string, unknown>): Record<string, unknown> | undefined;
  /** What to say when `select` finds nothing. */
  notFound?: string;
  print(result: Record<string, unknown>): string;
}

/** Every option any command takes (each command reads its own). */
const OPTIONS = {
  email: { type: 'string' },
  password: { type: 'string' },
  'token-id': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  'first-name': { type: 'string' },
  'last-name': { type: 'string' },
  name: { type: 'string' },
  scope: { type: 'string' },
  expires: { type: 'string' },
  ip: { type: 'string', multiple: true },
  file: { type: 'string' },
  'approve-scopes': { type: 'string' },
  app: { type: 'string' },
  kid: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  'web-origin': { type: 'string', multiple: true },
  'token-endpoint-auth-method': { type: 'string' },
  'jwks-file': { type: 'string' },
  'jwks-uri': { type: 'string' },
  'require-par': { type: 'boolean' },
  'no-require-par': { type: 'boolean' },
  'require-dpop': { type: 'boolean' },
  'no-require-dpop': { type: 'boolean' },
  profile: { type: 'string' },
  'dpop-nonce': { type: 'boolean' },
  'logo-url': { type: 'string' },
  'privacy-policy-url': { type: 'string' },
  'terms-of-service-url': { type: 'string' },
  to: { type: 'string' },
  env: { type: 'string' },
  type: { type: 'string' },
  currency: { type: 'string' },
  account: { type: 'string' },
  symbol: { type: 'string' },
  tick: { type: 'string' },
  lot: { type: 'string' },
  price: { type: 'string' },
  'min-quantity': { type: 'string' },
  'max-quantity': { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

function command(argv: string[]): { cmd: Command; json: boolean } {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  const need = (key: keyof typeof values) => {
    const v = values[key];
    if (typeof v !== 'string' || !v) throw new UsageError(`missing --${key}`);
    return v;
  };
  const what = positionals.join(' ');
  if (values.help || what === 'help' || !what) throw new HelpRequested();
  const found =
    usersCommand(what, values, need) ??
    appsCommand(what, values, need) ??
    keysCommand(what, values) ??
    backOfficeCommand(what, values, need);
  if (found) return { json: !!values.json, cmd: found };
  throw new UsageError(what ? `unknown command "${what}"` : 'no command given');
}

/** Users and their personal access tokens. */
function usersCommand(what: string, values: Values, need: (key: any) => string): Command | undefined {
  if (what === 'users create') {
    if (values['password'] !== undefined) {
      throw new UsageError(
        '--password is not taken: a password in the command line lands in shell history and in ps. Type it at the prompt, or pipe it on standard input',
      );
    }
    return {
      path: '/admin/users',
      body: { email: need('email'), firstName: need('first-name'), lastName: need('last-name') },
      password: true,
      print: (r) => `created user ${r['email']} (userId ${r['userId']})`,
    };
  }
  if (what === 'users list') {
    return {
      method: 'GET',
      path: '/admin/users?limit=500',
      body: {},
      print: (r) =>
        (r['users'] as Array<Record<string, string>>)
          .map((u) => `${u['email']}  ${u['firstName']} ${u['lastName']}  ${u['userId']}  since ${u['createdAt']!.slice(0, 10)}`)
          .join('\n') || 'no users yet',
    };
  }
  if (what === 'pat list') {
    return {
      method: 'GET',
      path: `/admin/pats?email=${encodeURIComponent(need('email'))}`,
      body: {},
      print: (r) =>
        (r['tokens'] as Array<Record<string, any>>)
          .map(
            (t) =>
              `${t['tokenId']}  ${String(t['name']).padEnd(16)} ${t['scope'].padEnd(10)} valid through ${t['validThrough']}  ${t['revokedAt'] ? `revoked ${isoMinute(t['revokedAt'])}` : t['lastUsedAt'] ? `last used ${isoMinute(t['lastUsedAt'])}` : 'never used'}`,
          )
          .join('\n') || `${r['email']} has no personal access tokens`,
    };
  }
  if (what === 'pat revoke') {
    return {
      path: `/admin/pats/${encodeURIComponent(need('token-id'))}/revoke`,
      body: { email: need('email') },
      print: (r) => `revoked ${r['tokenId']} ("${r['name']}"): it no longer logs in, and its sessions have ended`,
    };
  }
  if (what === 'pat create') {
    const ips = ((values['ip'] as string[] | undefined) ?? [])
      .flatMap((s) => s.split(','))
      .map((s) => s.trim())
      .filter(Boolean);
    return {
      path: '/admin/pats',
      body: { email: need('email'), name: need('name'), scope: need('scope'), expires: need('expires'), ips },
      print: (r) =>
        `created ${r['scope']} token "${r['name']}" (id ${r['tokenId']}), valid through ${r['validThrough']} (UTC)\n\n  ${r['token']}\n\nThis is the only time the token is shown: store it now.`,
    };
  }
  return undefined;
}

type Values = Record<string, string | boolean | string[] | undefined>;

/**
 * The promoted environment's profile, client authentication and policy, as given (the server
 * applies the defaults: the spec profile; the single flags remain for scripts that set them).
 */
function promotionPolicy(values: Values): Record<string, unknown> {
  const policy: Record<string, unknown> = {};
  if (typeof values['profile'] === 'string') policy['profile'] = values['profile'];
  if (values['dpop-nonce']) policy['dpopNonceRequired'] = true;
  if (typeof values['token-endpoint-auth-method'] === 'string') policy['tokenEndpointAuthMethod'] = values['token-endpoint-auth-method'];
  const file = values['jwks-file'];
  if (typeof file === 'string') {
    try {
      policy['jwks'] = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new UsageError(`cannot read ${file} as JSON: ${(err as Error).message}`);
    }
  }
  if (typeof values['jwks-uri'] === 'string') policy['jwksUri'] = values['jwks-uri'];
  for (const [flag, field] of [
    ['require-par', 'requirePushedAuthorizationRequests'],
    ['require-dpop', 'dpopBoundAccessTokens'],
  ] as const) {
    if (values[flag] && values[`no-${flag}`]) throw new UsageError(`give --${flag} or --no-${flag}, not both`);
    if (values[flag]) policy[field] = true;
    if (values[`no-${flag}`]) policy[field] = false;
  }
  return policy;
}

/** Issued credentials: the secret is printed once, here. */
const printCredentials = (r: Record<string, unknown>, what: string) =>
  `${what} "${r['appName']}" (app ${r['appId']}) in ${r['environment']}\n\n  client_id      ${r['clientId']}\n  client_secret  ${r['clientSecret']}\n  redirect URIs  ${(r['redirectUris'] as string[]).join(' ')}\n  web origins    ${((r['webOrigins'] as string[] | undefined) ?? []).join(' ') || '(none)'}\n  scopes         ${(r['approvedScopes'] as string[]).join(' ')}\n  profile        ${r['profile']}\n  client auth    ${r['tokenEndpointAuthMethod']}\n  PAR required   ${r['requirePushedAuthorizationRequests'] ? 'yes' : 'no'}\n  DPoP required  ${r['dpopBoundAccessTokens'] ? 'yes' : 'no'}\n\nThe secret is shown only this once (and mailed to ${r['businessEmail']}): store it now.`;

/** An app in `apps list`: each environment's client id, redirect URIs, web origins and client authentication. */
const appListing = (a: Record<string, any>) =>
  `${a['appId']}  ${a['appName']} (${a['companyName']})  ${a['status']}  furthest: ${a['environment']}  scopes: ${a['approvedScopes'].join(' ')}\n` +
  (a['environments'] as Array<Record<string, any>>)
    .map(
      (e) =>
        `    ${e['environment'].padEnd(4)} ${e['clientId']}  ${e['redirectUris'].join(' ')}` +
        (e['webOrigins']?.length ? `  web origins: ${e['webOrigins'].join(' ')}` : '') +
        `\n         auth: ${e['tokenEndpointAuthMethod']}${e['jwksUri'] ? ` (keys at ${e['jwksUri']})` : e['jwks'] ? ` (${e['jwks'].keys.length} registered key(s))` : ''}` +
        `  PAR required: ${e['requirePushedAuthorizationRequests'] ? 'yes' : 'no'}  DPoP required: ${e['dpopBoundAccessTokens'] ? 'yes' : 'no'}`,
    )
    .join('\n');

/** An app in `apps show`: each environment's OAuth profile, and a warning where it mixes profiles. */
const appProfiles = (a: Record<string, any>) =>
  `${a['appId']}  ${a['appName']} (${a['companyName']})  ${a['status']}  furthest: ${a['environment']}  scopes: ${(a['approvedScopes'] as string[]).join(' ')}\n` +
  (a['environments'] as Array<Record<string, any>>)
    .map(
      (e) =>
        `    ${e['environment'].padEnd(4)} ${e['clientId']}  profile: ${e['profile']}\n` +
        `         auth: ${e['tokenEndpointAuthMethod']}  PAR required: ${e['requirePushedAuthorizationRequests'] ? 'yes' : 'no'}` +
        `  DPoP required: ${e['dpopBoundAccessTokens'] ? 'yes' : 'no'}  DPoP nonce: ${e['dpopNonceRequired'] ? 'yes' : 'no'}` +
        (e['warning'] ? `\n         warning: ${e['warning']}` : ''),
    )
    .join('\n');

const commaList = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function appsCommand(what: string, values: Values, need: (key: any) => string): Command | undefined {
  const app = () => encodeURIComponent(need('app'));
  switch (what) {
    case 'apps provision':
      return provisionCommand(values, need);
    case 'apps list':
      return {
        method: 'GET',
        path: '/admin/apps',
        body: {},
        print: (r) => (r['apps'] as Array<Record<string, any>>).map(appListing).join('\n') || 'no apps yet',
      };
    case 'apps show':
      return {
        method: 'GET',
        path: '/admin/apps',
        body: {},
        select: (r) => {
          const ref = need('app');
          return (r['apps'] as Array<Record<string, any>>).find(
            (a) => a['appId'] === ref || (a['environments'] as Array<Record<string, any>>).some((e) => e['clientId'] === ref),
          );
        },
        notFound: `no app with id or client id "${need('app')}"`,
        print: appProfiles,
      };
    case 'apps set-profile': {
      const policy = promotionPolicy(values);
      if (!policy['profile']) throw new UsageError('missing --profile (spec or fapi2)');
      return {
        path: `/admin/apps/${app()}/profile`,
        body: { environment: need('env'), policy },
        print: (r) => `"${r['appName']}" in ${r['environment']} (${r['clientId']}) now follows the ${r['profile']} profile`,
      };
    }
    case 'apps promote':
      return promoteCommand(values, app);
    case 'apps rotate-secret':
      return {
        path: `/admin/apps/${app()}/rotate-secret`,
        body: values['env'] ? { environment: values['env'] } : {},
        print: (r) => printCredentials(r, 'rotated the secret of'),
      };
    case 'apps suspend':
      return {
        path: `/admin/apps/${app()}/suspend`,
        body: {},
        print: (r) => `suspended "${r['appName']}" (app ${r['appId']}); ${r['grantsRevoked']} grant(s) revoked`,
      };
    default:
      return undefined;
  }
}

/** `apps provision`: the registration form read from its file, with the scopes approved at once if given. */
function provisionCommand(values: Values, need: (key: any) => string): Command {
  let registration: unknown;
  const file = need('file');
  try {
    registration = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`cannot read ${file} as JSON: ${(err as Error).message}`);
  }
  const approved = commaList(values['approve-scopes'] as string | undefined);
  return {
    path: '/admin/apps',
    body: { registration, ...(approved.length ? { approvedScopes: approved } : {}) },
    print: (r) => printCredentials(r, 'provisioned'),
  };
}

/** `apps promote`: the next environment's redirect URIs, web origins, consent pages and policy; `app` is the app's reference, encoded. */
function promoteCommand(values: Values, app: () => string): Command {
  const uris = (values['redirect-uri'] as string[] | undefined) ?? [];
  if (!uris.length) throw new UsageError('missing --redirect-uri (each environment has its own redirect URIs)');
  // Each environment has its own web origins too: none given, the new environment's credentials have none.
  const origins = (values['web-origin'] as string[] | undefined) ?? [];
  // Outside DEV the consent page's logo, privacy policy and terms must be https: corrected ones can come with the promotion.
  const pages = Object.fromEntries(
    (['logoUrl', 'privacyPolicyUrl', 'termsOfServiceUrl'] as const).flatMap((key) => {
      const value = values[key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)];
      return typeof value === 'string' ? [[key, value]] : [];
    }),
  );
  const policy = promotionPolicy(values);
  return {
    path: `/admin/apps/${app()}/promote`,
    body: {
      redirectUris: uris,
      ...(origins.length ? { webOrigins: origins } : {}),
      ...(values['to'] ? { to: values['to'] } : {}),
      ...(Object.keys(pages).length ? { pages } : {}),
      ...(Object.keys(policy).length ? { policy } : {}),
    },
    print: (r) => printCredentials(r, 'promoted'),
  };
}

/** The access-token signing keys. */
function keysCommand(what: string, values: Values): Command | undefined {
  switch (what) {
    case 'keys list':
      return {
        method: 'GET',
        path: '/admin/keys',
        body: {},
        print: (r) =>
          (r['keys'] as Array<Record<string, string | null>>)
            .map(
              (k) =>
                `${k['kid']}  ${k['status']!.padEnd(9)} created ${k['createdAt']}${k['retiredAt'] ? `  retired ${k['retiredAt']}` : ''}`,
            )
            .join('\n'),
      };
    case 'keys rotate':
      return {
        path: '/admin/keys/rotate',
        body: {},
        print: (r) => `new signing key ${r['kid']} is active; the previous one stays published until you retire it`,
      };
    case 'keys retire': {
      const kid = values['kid'];
      if (typeof kid !== 'string' || !kid) throw new UsageError('missing --kid (see keys list)');
      return {
        path: `/admin/keys/${encodeURIComponent(kid)}/retire`,
        body: {},
        print: (r) => `retired signing key ${r['kid']}: tokens it signed no longer verify`,
      };
    }
    default:
      return undefined;
  }
}

/** Accounts and instruments: the back office, answered by the domain services behind the admin API. */
function backOfficeCommand(what: string, values: Values, need: (key: any) => string): Command | undefined {
  const account = (a: Record<string, any>) =>
    `${a['accountId']}  ${a['number']}  ${String(a['type']).padEnd(6)}  ${a['baseCurrency']}  ${a['status']}`;
  const instrument = (i: Record<string, any>) =>
    `${String(i['symbol']).padEnd(8)}  ${i['name']}  ${i['currency']}  tick ${i['tickSize']}  lot ${i['lotSize']}  last ${i['lastPrice']}  ${i['tradable'] ? 'trading' : 'HALTED'}`;
  const optional = (key: string, flag: string) => (typeof values[flag] === 'string' ? { [key]: values[flag] } : {});
  switch (what) {
    case 'accounts open':
      return {
        path: '/admin/accounts',
        body: { email: need('email'), type: need('type'), currency: need('currency') },
        print: (r) =>
          `opened ${r['type']} account ${r['number']} in ${r['baseCurrency']} for ${r['email']}\n\n  accountId  ${r['accountId']}`,
      };
    case 'accounts list':
      return {
        method: 'GET',
        path: `/admin/accounts?email=${encodeURIComponent(need('email'))}`,
        body: {},
        print: (r) =>
          (r['accounts'] as Array<Record<string, any>>).map(account).join('\n') || `${r['email']} has no accounts yet (accounts open)`,
      };
    case 'accounts close':
      return {
        path: `/admin/accounts/${encodeURIComponent(need('account'))}/close`,
        body: {},
        print: (r) => `closed account ${r['number']} (${r['accountId']})`,
      };
    case 'instruments list':
      return {
        method: 'GET',
        path: '/admin/instruments',
        body: {},
        print: (r) => (r['instruments'] as Array<Record<string, any>>).map(instrument).join('\n') || 'no instruments yet',
      };
    case 'instruments add':
      return {
        path: '/admin/instruments',
        body: {
          symbol: need('symbol'),
          name: need('name'),
          currency: need('currency'),
          tickSize: need('tick'),
          price: need('price'),
          ...optional('lotSize', 'lot'),
          ...optional('minQuantity', 'min-quantity'),
          ...optional('maxQuantity', 'max-quantity'),
        },
        print: (r) => `listed ${r['symbol']} (${r['name']}) at ${r['lastPrice']} ${r['currency']}\n${instrument(r)}`,
      };
    case 'instruments halt':
      return {
        path: `/admin/instruments/${encodeURIComponent(need('symbol'))}/halt`,
        body: {},
        print: (r) => `${r['symbol']} is halted: new orders are refused and working orders do not fill`,
      };
    case 'instruments resume':
      return {
        path: `/admin/instruments/${encodeURIComponent(need('symbol'))}/resume`,
        body: {},
        print: (r) => `${r['symbol']} is trading again`,
      };
    default:
      return undefined;
  }
}

async function main(): Promise<number> {
  let parsed: ReturnType<typeof command>;
  try {
    parsed = command(process.argv.slice(2));
  } catch (err) {
    if (err instanceof HelpRequested) {
      say(USAGE);
      return 0;
    }
    complain(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (parsed.cmd.password) parsed.cmd.body['password'] = await readPassword();
  const res = await send(parsed.cmd);
  if (!res) return 1;
  const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    refused(res, answer, parsed.json);
    return 1;
  }
  const selected = parsed.cmd.select ? parsed.cmd.select(answer) : answer;
  if (!selected) {
    complain(`error: ${parsed.cmd.notFound ?? 'nothing matched'}`);
    return 1;
  }
  if (parsed.json) console.log(printableJson(selected));
  else say(parsed.cmd.print(printableDeep(selected)));
  return 0;
}

/** The command's request to the admin API; undefined (said on stderr) when the API cannot be reached. */
async function send(cmd: Command): Promise<Response | undefined> {
  try {
    const method = cmd.method ?? 'POST';
    return await fetch(new URL(cmd.path, ADMIN_URL), {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken()}` },
      body: method === 'POST' ? JSON.stringify(cmd.body) : undefined,
    });
  } catch (err) {
    complain(`cannot reach the admin API at ${ADMIN_URL}: ${(err as Error).message}`);
    return undefined;
  }
}

/** Says why the admin API refused: every problem of a registration form, or the error, and which credential a 401 refused. */
function refused(res: Response, answer: Record<string, unknown>, json: boolean): void {
  // Every string of the answer escaped, its own line breaks included: no value can draw a line of its own.
  const body = printableDeep(answer);
  if (json) console.log(printableJson(answer));
  else if (Array.isArray(body['problems'])) {
    complain(`error ${res.status}: nothing was created; fix every field below and try again`);
    for (const p of body['problems'] as Array<{ field: string; message: string }>) complain(`  ${p.field}: ${p.message}`);
    complain('every field of the registration form, by its JSON key: tools/admin/registration.example.json');
  } else
    complain(
      `error ${res.status} ${body['code'] ?? ''}: ${body['detail'] ?? res.statusText}${body['field'] ? ` (field: ${body['field']})` : ''}`,
    );
  if (res.status === 401)
    complain(
      `the admin API at ${ADMIN_URL} refused the credential from ${credentialSource()}: is it this deployment's (ADMIN_URL, ADMIN_TOKEN or PLATFORM_DATA_DIR)?`,
    );
}

void main().then((code) => process.exit(code));
