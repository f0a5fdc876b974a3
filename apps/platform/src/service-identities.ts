/**
 * The all-in-one's service identities (each service's ES256 key), kept in its data directory
 * so they outlive a restart: what the OMS signed on the settlement stream before a restart is
 * still verified after it, and a client resuming its order events with Last-Event-ID gets them.
 * The keys are sealed (AES-256-GCM, auth's KeyEncryption) with the installation's
 * key-encryption key, so the file alone signs nothing.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { exportServiceKey, generateServiceKey, parseServiceKey, SERVICE_NAMES, type ServiceKey, type ServiceName } from '@trading/auth';
import { KeyEncryption } from '@trading/auth-service';
import type { Logger } from '@trading/logging';
import { ensureSecretFile, KEY_ENCRYPTION_KEY_FILE } from './admin-token';
import type { PlatformConfig } from './config';
import { StartError } from './start-error';

export const SERVICE_IDENTITIES_FILE = 'service-identities.json';
/** Bound into the ciphertext: a value sealed for anything else (a signing key's row) does not open as this file. */
const SEALED_AS = 'platform:service-identities';
const VERSION = 1;

interface IdentitiesFile {
  version: number;
  /** `enc:v1:…`: the services' private JWKs ({ service: SERVICE_KEY }) in JSON, sealed. */
  sealed: string;
}

/** The key-encryption key of this installation: AUTH_KEY_ENCRYPTION_KEY, or the one made once in the data directory. */
const keyEncryptionKeyOf = (config: PlatformConfig): string =>
  config.AUTH_KEY_ENCRYPTION_KEY ?? ensureSecretFile(config.PLATFORM_DATA_DIR, KEY_ENCRYPTION_KEY_FILE, 'kek_');

/**
 * The services' identities of the installation in `config.PLATFORM_DATA_DIR`: read from its
 * file, or made and written there on its first start. Called once per installation start (the
 * primary, or the only process); concurrent starts on one directory still end with one set (the
 * file is created with a hard link that never replaces one that exists: the loser reads the
 * winner's). A file this key-encryption key cannot open stops the start (StartError), naming the
 * file and the way out; it is never replaced silently.
 */
export function loadServiceIdentities(config: PlatformConfig, logger?: Logger): Record<ServiceName, ServiceKey> {
  const dataDir = config.PLATFORM_DATA_DIR;
  const file = join(dataDir, SERVICE_IDENTITIES_FILE);
  const kek = keyEncryptionKeyOf(config);
  const sealer = new KeyEncryption(kek, 'service-identities');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });

  let found = readIdentities(file, sealer);
  if (!found) {
    const fresh = Object.fromEntries(SERVICE_NAMES.map((s) => [s, generateServiceKey(s)])) as Record<ServiceName, ServiceKey>;
    if (createOnce(file, seal(sealer, fresh))) {
      logger?.info({ file }, 'made the services’ identities of this installation');
      return fresh;
    }
    found = readIdentities(file, sealer); // another start made it first: use that one
    if (!found) throw new StartError(`${file} vanished while this start read it; start again`);
  }
  const missing = SERVICE_NAMES.filter((s) => !found![s]);
  if (!missing.length) return found as Record<ServiceName, ServiceKey>;
  // A service this file predates: add its identity, keep the others.
  const completed = { ...found, ...Object.fromEntries(missing.map((s) => [s, generateServiceKey(s)])) } as Record<ServiceName, ServiceKey>;
  replace(file, seal(sealer, completed));
  logger?.info({ file, added: missing }, 'added identities of new services to this installation’s');
  return completed;
}

function seal(sealer: KeyEncryption, keys: Record<ServiceName, ServiceKey>): string {
  const plain = JSON.stringify(Object.fromEntries(SERVICE_NAMES.map((s) => [s, exportServiceKey(keys[s])])));
  return `${JSON.stringify({ version: VERSION, sealed: sealer.encrypt(SEALED_AS, plain) } satisfies IdentitiesFile)}\n`;
}

/** The identities in `file` (some services may be missing), undefined when it does not exist. */
function readIdentities(file: string, sealer: KeyEncryption): Partial<Record<ServiceName, ServiceKey>> | undefined {
  const text = readOwnFile(file);
  if (text === undefined) return undefined;
  const reset = 'start this installation over with `npm run reset` (deletes its data directory: database, credentials, demo data)';
  const unreadable = (why: string, hint = `Restore the file from a backup, or ${reset}.`) =>
    new StartError(`The services' identities in ${file} ${why}. ${hint}`);
  let parsed: IdentitiesFile;
  try {
    parsed = JSON.parse(text) as IdentitiesFile;
  } catch {
    throw unreadable('are not readable (not JSON)');
  }
  if (parsed?.version !== VERSION || typeof parsed.sealed !== 'string' || !KeyEncryption.isEncrypted(parsed.sealed))
    throw unreadable(`are not in a format this version reads (version ${String(parsed?.version)})`);
  let plain: string;
  try {
    plain = sealer.decrypt(SEALED_AS, parsed.sealed);
  } catch {
    throw unreadable(
      'cannot be decrypted with this installation’s key-encryption key',
      'Was AUTH_KEY_ENCRYPTION_KEY (or the key-encryption-key file beside it) changed, or the file copied from another installation? ' +
        `Put the original key back, or ${reset}.`,
    );
  }
  const keys: Partial<Record<ServiceName, ServiceKey>> = {};
  try {
    const exported = JSON.parse(plain) as Record<string, string>;
    for (const service of SERVICE_NAMES) if (exported[service]) keys[service] = parseServiceKey(service, exported[service]);
  } catch (err) {
    throw unreadable(`hold an invalid key (${err instanceof Error ? err.message : String(err)})`);
  }
  return keys;
}

/** The text of `file`, undefined when it does not exist; refused unless it is a regular file of this user that others cannot read. */
function readOwnFile(file: string): string | undefined {
  try {
    const stat = lstatSync(file);
    if (!stat.isFile()) throw new StartError(`${file} is not a regular file; remove it`);
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid())
      throw new StartError(`${file} belongs to another user; remove it`);
    if ((stat.mode & 0o077) !== 0)
      throw new StartError(`${file} is readable by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it`);
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** A temporary file beside `file`, written in full and flushed, 0600. */
function writeTemp(file: string, content: string): string {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temp;
}

/** Puts `content` at `file` whole, unless a file is there already (false then). */
function createOnce(file: string, content: string): boolean {
  const temp = writeTemp(file, content);
  try {
    linkSync(temp, file); // atomic, and never over an existing file
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(temp);
  }
}

/** Replaces `file` with `content` whole (write beside it, then rename over it). */
function replace(file: string, content: string): void {
  const temp = writeTemp(file, content);
  try {
    renameSync(temp, file);
  } catch (err) {
    unlinkSync(temp);
    throw err;
  }
}
