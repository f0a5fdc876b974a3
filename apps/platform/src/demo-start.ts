import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DOCS_OAUTH_REDIRECT_PATH } from '@trading/rest-facade-service';
import type { Platform } from './app';
import type { PlatformConfig } from './config';
import { DEMO_USERS, DEMO_VENDOR_APP } from './demo-data';

/** Where the demo's credentials are kept (0600, in the data directory): the banner names the file, never prints them. */
export const DEMO_CREDENTIALS_FILE = 'demo-credentials.json';
export const demoCredentialsPath = (config: Pick<PlatformConfig, 'PLATFORM_DATA_DIR'>) =>
  resolve(config.PLATFORM_DATA_DIR, DEMO_CREDENTIALS_FILE);

export interface DemoCredentials {
  /** alice's READ_WRITE PAT: kept across starts while it has more than a day to live. */
  pat: string;
  patExpiresAt: string;
  clientId: string;
  /** Random per data directory: no published secret opens the demo vendor app. */
  clientSecret: string;
}

/** Names of the PATs this file minted: an older one is revoked when a new one is made. */
const DEMO_PAT_NAME = 'all-in-one demo';
const DAY_MS = 86400_000;

/**
 * The demo's per-start extras: alice's READ_WRITE PAT (the recorded one while it is live, else
 * a new one, every other demo PAT revoked) and the demo vendor app with a random secret.
 * Returns the credentials file ('' without demo data).
 */
export async function prepareDemo(platform: Platform, config: PlatformConfig): Promise<string> {
  if (!config.PLATFORM_SEED_DEMO) return '';
  const file = demoCredentialsPath(config);
  const recorded = readCredentials(file);
  const { registry } = platform.auth;
  const pat = await demoPat(platform.auth, recorded);
  const { clientId } = DEMO_VENDOR_APP;
  const clientSecret = await demoClientSecret(platform.auth, recorded);

  // A data directory from before the demo app placed orders: its app gains the scopes it has now.
  await registry.approveDevScopes(clientId, DEMO_VENDOR_APP.registration.scopes);

  // The API docs (Swagger UI at /docs) sign in as the demo app with PKCE: its redirect page, as the browser spells the facade.
  await registry.addDevRedirectUris(clientId, docsRedirectUris(platform.urls.api));

  writeCredentials(file, { pat: pat.token, patExpiresAt: pat.expiresAt.toISOString(), clientId, clientSecret });
  return file;
}

/** alice's demo PAT: the recorded one while it has more than a day to live, else a new one; every other demo PAT revoked. */
async function demoPat(
  { pats, users }: Platform['auth'],
  recorded: DemoCredentials | undefined,
): Promise<{ token: string; expiresAt: Date }> {
  const alice = (await users.findByEmail(DEMO_USERS[0]!.email))!;
  const tokens = await pats.listForUser(alice.id);
  const recordedId = recorded?.pat.split('.')[0];
  const live = tokens.find((t) => t.id === recordedId && !t.revokedAt && t.expiresAt.getTime() > Date.now() + DAY_MS);
  // One live demo PAT at a time: those of earlier starts (and of versions that printed them) stop working.
  for (const t of tokens)
    if (t.id !== (live && recordedId) && !t.revokedAt && t.name.startsWith(DEMO_PAT_NAME)) await pats.revoke(alice.id, t.id);
  if (live && recorded) return { token: recorded.pat, expiresAt: live.expiresAt };
  const created = await pats.create({
    userId: alice.id,
    name: `${DEMO_PAT_NAME} ${new Date().toISOString()}`,
    access: 'READ_WRITE',
    expires: new Date(Date.now() + 30 * DAY_MS).toISOString().slice(0, 10),
  });
  return { token: created.token, expiresAt: created.pat.expiresAt };
}

/** The demo vendor app's secret: the recorded one while it still opens the app, else a new random one (the app made if missing). */
async function demoClientSecret({ registry }: Platform['auth'], recorded: DemoCredentials | undefined): Promise<string> {
  const { clientId } = DEMO_VENDOR_APP;
  let clientSecret = recorded?.clientId === clientId ? recorded.clientSecret : undefined;
  if (!(await registry.findClient(clientId, 'DEV', { includeSuspended: true }))) {
    clientSecret ??= `tcs_${randomBytes(32).toString('base64url')}`;
    await registry.ensureDemoApp(DEMO_VENDOR_APP.registration, { clientId, clientSecret });
  } else if (!clientSecret || !(await registry.authenticate(clientId, clientSecret, 'DEV', { includeSuspended: true }))) {
    // An app from before this file (the old published secret) or a lost file: a new random secret.
    clientSecret = (await registry.rotateSecret(clientId, 'DEV')).clientSecret;
  }
  return clientSecret;
}

/** Swagger UI's OAuth redirect page on this platform's facade, at localhost and at 127.0.0.1. */
export function docsRedirectUris(apiUrl: string): string[] {
  const { port, protocol } = new URL(apiUrl);
  return ['localhost', '127.0.0.1'].map((host) => `${protocol}//${host}${port ? `:${port}` : ''}${DOCS_OAUTH_REDIRECT_PATH}`);
}

/** The recorded credentials, if the file exists; refused when another user owns it or others can read it. */
function readCredentials(file: string): DemoCredentials | undefined {
  let stat;
  try {
    stat = lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (!stat.isFile()) throw new Error(`${file} is not a regular file; remove it`);
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) throw new Error(`${file} belongs to another user; remove it`);
  if ((stat.mode & 0o077) !== 0)
    throw new Error(`${file} is readable by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it or remove it`);
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<DemoCredentials>;
    if (typeof parsed.pat === 'string' && typeof parsed.clientId === 'string' && typeof parsed.clientSecret === 'string')
      return parsed as DemoCredentials;
  } catch {
    // Unreadable JSON: start over with new credentials, as if the file were missing.
  }
  return undefined;
}

/** Written beside the file and renamed over it, so a crash never leaves half a file. */
function writeCredentials(file: string, credentials: DemoCredentials): void {
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  writeFileSync(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(temporary, file);
}
