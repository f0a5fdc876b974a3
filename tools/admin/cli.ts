/**
 * The service team's admin CLI. It talks to the auth app's admin API, authenticated by the
 * admin credential, so it works the same against a laptop and a deployment.
 *
 *   npm run admin -- users create --email a@b.c --password '…' --first-name A --last-name B [--json]
 *   npm run admin -- pat create --email a@b.c --name ci --scope READ_ONLY --expires 2027-01-31 [--ip 203.0.113.7 --ip 10.0.0.0/8] [--json]
 *
 * Environment: ADMIN_URL (default http://localhost:8081), ADMIN_TOKEN (default: the all-in-one local default).
 */
import { parseArgs } from 'node:util';

const ADMIN_URL = process.env['ADMIN_URL'] ?? 'http://localhost:8081';
const ADMIN_TOKEN = process.env['ADMIN_TOKEN'] ?? 'local-dev-admin-token-0000';

const USAGE = `usage:
  admin users create --email <e-mail> --password <password> --first-name <name> --last-name <name> [--json]
  admin pat create --email <user e-mail> --name <label> --scope READ_ONLY|READ_WRITE --expires YYYY-MM-DD [--ip <address or CIDR>]... [--json]`;

class UsageError extends Error {}

interface Command {
  path: string;
  body: Record<string, unknown>;
  print(result: Record<string, unknown>): string;
}

function command(argv: string[]): { cmd: Command; json: boolean } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      'first-name': { type: 'string' },
      'last-name': { type: 'string' },
      name: { type: 'string' },
      scope: { type: 'string' },
      expires: { type: 'string' },
      ip: { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
    },
  });
  const need = (key: keyof typeof values) => {
    const v = values[key];
    if (typeof v !== 'string' || !v) throw new UsageError(`missing --${key}`);
    return v;
  };
  const what = positionals.join(' ');
  if (what === 'users create') {
    return {
      json: !!values.json,
      cmd: {
        path: '/admin/users',
        body: { email: need('email'), password: need('password'), firstName: need('first-name'), lastName: need('last-name') },
        print: (r) => `created user ${r['email']} (userId ${r['userId']})`,
      },
    };
  }
  if (what === 'pat create') {
    const ips = (values.ip ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
    return {
      json: !!values.json,
      cmd: {
        path: '/admin/pats',
        body: { email: need('email'), name: need('name'), scope: need('scope'), expires: need('expires'), ips },
        print: (r) =>
          `created ${r['scope']} token "${r['name']}" (id ${r['tokenId']}), valid until ${r['expiresAt']}\n\n  ${r['token']}\n\nThis is the only time the token is shown: store it now.`,
      },
    };
  }
  throw new UsageError(what ? `unknown command "${what}"` : 'no command given');
}

async function main(): Promise<number> {
  let parsed: ReturnType<typeof command>;
  try {
    parsed = command(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  let res: Response;
  try {
    res = await fetch(new URL(parsed.cmd.path, ADMIN_URL), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify(parsed.cmd.body),
    });
  } catch (err) {
    console.error(`cannot reach the admin API at ${ADMIN_URL}: ${(err as Error).message}`);
    return 1;
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    if (parsed.json) console.log(JSON.stringify(body));
    else console.error(`error ${res.status} ${body['code'] ?? ''}: ${body['detail'] ?? res.statusText}${body['field'] ? ` (field: ${body['field']})` : ''}`);
    return 1;
  }
  console.log(parsed.json ? JSON.stringify(body) : parsed.cmd.print(body));
  return 0;
}

void main().then((code) => process.exit(code));
