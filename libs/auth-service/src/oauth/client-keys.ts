import { createHash } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { request, type Agent } from 'undici';
import { AddressNotAllowed, literalAddressRefusal, publicOnlyAgent } from '@trading/auth';
import type { Client } from '../registry/registry.service';

/** A jwks_uri's answer may be at most this large, and must arrive within this time. */
export const JWKS_MAX_BYTES = 64 * 1024;
const JWKS_FETCH_TIMEOUT_MS = 3000;
/** A fetched key set is used this long; a kid it lacks makes it fetched again at most this often. */
const JWKS_MAX_AGE_MS = 5 * 60_000;
const JWKS_UNKNOWN_KID_INTERVAL_MS = 30_000;
/** A failed fetch is answered from memory this long, so a failing jwks_uri is not asked once per request. */
const JWKS_FAILURE_HOLD_MS = 5000;
const MAX_SETS = 1000;

/**
 * Why a client's jwks_uri gave no keys. Not `transient`: the client's own doing (an address auth
 * never connects to, a redirect, too large, not a JWK Set): the assertion fails, invalid_client.
 * `transient`: its server did not answer in time or at all: worth a retry.
 */
export class JwksUriFailure extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

export interface ClientKeySetsOptions {
  /** DEV only: a jwks_uri may lead to this machine (loopback addresses). Every other non-public address is refused regardless. */
  allowLoopback: boolean;
  /** How host names are resolved (the system's resolver by default); every address it gives is checked before connecting. */
  resolve?: LookupFunction;
  /** Certificates to trust besides the system's (a test's own https server). */
  ca?: string;
}

interface RemoteSet {
  keys?: JWTVerifyGetKey;
  fetchedAt: number;
  failure?: { error: JwksUriFailure; at: number };
  loading?: Promise<JWTVerifyGetKey>;
}

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

/**
 * The keys a client's assertions are verified with: its registered set, or the one it publishes
 * at its jwks_uri. A jwks_uri is fetched by auth on the client's word, so each fetch is fenced:
 * https only, no redirects, at most 64 KiB within 3 s, and every connection goes only to a public
 * address. The address is checked by the resolver hook the connection itself uses, so a name that
 * resolves to a public address when registered and to 127.0.0.1 or 169.254.169.254 later (DNS
 * rebinding) is refused at that connection. Loopback is allowed only when `allowLoopback` (DEV).
 */
export class ClientKeySets {
  private readonly agent: Agent;
  private readonly registered = new Map<string, JWTVerifyGetKey>();
  private readonly remote = new Map<string, RemoteSet>();

  constructor(private readonly options: ClientKeySetsOptions) {
    this.agent = publicOnlyAgent({
      allowLoopback: options.allowLoopback,
      resolve: options.resolve,
      ca: options.ca,
      timeouts: { connect: JWKS_FETCH_TIMEOUT_MS, headers: JWKS_FETCH_TIMEOUT_MS, body: JWKS_FETCH_TIMEOUT_MS },
      maxResponseSize: JWKS_MAX_BYTES,
      connections: 8,
    });
  }

  /** The client's keys, or null when it has none. A jwks_uri's set is fetched when first needed, and throws JwksUriFailure when it cannot be. */
  keysOf(client: Pick<Client, 'jwks' | 'jwksUri'>): JWTVerifyGetKey | null {
    if (client.jwks) {
      const id = digest(JSON.stringify(client.jwks));
      let keys = this.registered.get(id);
      if (!keys) {
        keys = createLocalJWKSet(client.jwks as unknown as JSONWebKeySet);
        if (this.registered.size >= MAX_SETS) this.registered.clear();
        this.registered.set(id, keys);
      }
      return keys;
    }
    const uri = client.jwksUri;
    if (!uri) return null;
    return async (header, token) => {
      const set = await this.current(uri, false);
      try {
        return await set.keys!(header, token);
      } catch (err) {
        // A kid the set lacks may be a key the client has just published: fetch again, at most once per interval.
        if (!(err instanceof joseErrors.JWKSNoMatchingKey) || Date.now() - set.fetchedAt < JWKS_UNKNOWN_KID_INTERVAL_MS) throw err;
        const again = await this.current(uri, true);
        return again.keys!(header, token);
      }
    };
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  /** The set fetched from `uri`, fetched again when older than the max age (or `refresh`); one fetch at a time per URI. */
  private async current(uri: string, refresh: boolean): Promise<RemoteSet> {
    let set = this.remote.get(uri);
    if (!set) {
      if (this.remote.size >= MAX_SETS) this.remote.clear();
      set = { fetchedAt: 0 };
      this.remote.set(uri, set);
    }
    const now = Date.now();
    if (set.keys && !refresh && now - set.fetchedAt < JWKS_MAX_AGE_MS) return set;
    if (set.failure && now - set.failure.at < JWKS_FAILURE_HOLD_MS) throw set.failure.error;
    if (!set.loading) {
      const loading = this.fetchKeys(uri);
      set.loading = loading;
      const entry = set;
      loading.then(
        (keys) => Object.assign(entry, { keys, fetchedAt: Date.now(), failure: undefined, loading: undefined }),
        (error: JwksUriFailure) => Object.assign(entry, { failure: { error, at: Date.now() }, loading: undefined }),
      );
    }
    await set.loading;
    return set;
  }

  private async fetchKeys(uri: string): Promise<JWTVerifyGetKey> {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      throw new JwksUriFailure('the registered jwks_uri is not a URL', false);
    }
    if (url.protocol !== 'https:') throw new JwksUriFailure('the registered jwks_uri is not an https URL', false);
    // A literal address is connected to without a lookup: it is checked here instead.
    if (literalAddressRefusal(url, this.options.allowLoopback)) throw notPublic();
    let text: string;
    try {
      const res = await request(url, {
        dispatcher: this.agent,
        method: 'GET',
        headers: { accept: 'application/jwk-set+json, application/json' },
        signal: AbortSignal.timeout(JWKS_FETCH_TIMEOUT_MS),
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        if (res.statusCode >= 300 && res.statusCode < 400)
          throw new JwksUriFailure(`the jwks_uri answered ${res.statusCode}: redirects are not followed; register the final URL`, false);
        throw new JwksUriFailure(`the jwks_uri answered ${res.statusCode}, not 200`, res.statusCode >= 500);
      }
      text = await res.body.text();
    } catch (err) {
      throw failureOf(err);
    }
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      throw new JwksUriFailure('the jwks_uri did not answer JSON', false);
    }
    if (typeof document !== 'object' || document === null || !Array.isArray((document as { keys?: unknown }).keys))
      throw new JwksUriFailure('the jwks_uri did not answer a JWK Set ({ "keys": [ … ] })', false);
    try {
      return createLocalJWKSet(document as JSONWebKeySet);
    } catch {
      throw new JwksUriFailure('the jwks_uri did not answer a usable JWK Set', false);
    }
  }
}

/** The vendor learns only that the address is refused, not which address its name had here. */
const notPublic = () => new JwksUriFailure('the jwks_uri does not lead to a public address, and auth connects only to public ones', false);

function failureOf(err: unknown): JwksUriFailure {
  if (err instanceof JwksUriFailure) return err;
  if (err instanceof AddressNotAllowed) return notPublic();
  const code = (err as { code?: unknown })?.code;
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE')
    return new JwksUriFailure(`the jwks_uri answered more than ${JWKS_MAX_BYTES / 1024} KiB`, false);
  return new JwksUriFailure('the jwks_uri could not be read', true);
}
