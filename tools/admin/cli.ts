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
 *                    [--profile spec|fapi2] (default spec) [--jwks-file keys.json | --jwks-uri https://…] [--dpop-nonce] [--require-mfa | --no-require-mfa]
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
import { appsCommand } from './apps-commands';
import { webhookCommand } from './webhook-commands';
import { backOfficeCommand, keysCommand } from './back-office-commands';
import { UsageError, type Command } from './command';
import { usersCommand } from './users-commands';

const ADMIN_URL = process.env['ADMIN_URL'] ?? 'http://127.0.0.1:8189';

/**
 * Everything the CLI writes goes through these two: control and bidi characters are shown as
 * escapes, whatever their source (an app's name, a server's message, the command line), since a
 * terminal acts on them: it would draw rows that are not there, or change its title.
 */
const say = (text: string) => console.log(printable(text, { keepLineBreaks: true }));
const complain = (text: string) => console.error(printable(text, { keepLineBreaks: true }));

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
                     [--dpop-nonce]   (every DPoP proof must carry the server's nonce)
                     [--require-mfa | --no-require-mfa]   (consenting needs a second factor; PROD default: on when the app may trade or move money) [--json]
  admin apps show --app <appId|clientId> [--json]
  admin apps set-profile --app <appId|clientId> --env DEV|UAT|PROD --profile spec|fapi2 [--jwks-file <.json> | --jwks-uri <url>] [--dpop-nonce] [--json]
  admin apps rotate-secret --app <appId|clientId> [--env DEV|UAT|PROD] [--json]
  admin apps suspend --app <appId|clientId> [--json]
  admin apps webhooks add --app <appId|clientId> --env DEV|UAT|PROD --url <https url> [--events order.filled,…] [--disable] [--json]
  admin apps webhooks list|deliveries --app <appId|clientId> --env DEV|UAT|PROD [--json]
  admin apps webhooks update --app <appId|clientId> --env DEV|UAT|PROD --endpoint <id> [--url …] [--events …] [--enable|--disable] [--json]
  admin apps webhooks rotate-secret|remove --app <appId|clientId> --env DEV|UAT|PROD --endpoint <id> [--json]
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
  url: { type: 'string' },
  events: { type: 'string' },
  endpoint: { type: 'string' },
  enable: { type: 'boolean', default: false },
  disable: { type: 'boolean', default: false },
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
  'require-mfa': { type: 'boolean' },
  'no-require-mfa': { type: 'boolean' },
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
    webhookCommand(what, values, need) ??
    appsCommand(what, values, need) ??
    keysCommand(what, values) ??
    backOfficeCommand(what, values, need);
  if (found) return { json: !!values.json, cmd: found };
  throw new UsageError(what ? `unknown command "${what}"` : 'no command given');
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
