import { lookup as systemLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { nonPublicAddress } from './ip';

/**
 * A connection refused because its address is not public. `kind` ("loopback", "private",
 * "link-local", …) is for our logs only: a vendor is told only that the address is refused, not
 * which address its name had here.
 */
export class AddressNotAllowed extends Error {
  readonly code = 'ADDRESS_NOT_ALLOWED';
  constructor(readonly kind: string) {
    super('address not allowed');
  }
}

export interface PublicOnlyOptions {
  /** Loopback addresses (this machine) may be connected to: DEV only. Every other non-public address is refused regardless. */
  allowLoopback?: boolean;
  /** How host names are resolved (the system's resolver by default); every address it gives is checked before connecting. */
  resolve?: LookupFunction;
}

export interface PublicOnlyAgentOptions extends PublicOnlyOptions {
  /** Certificates to trust besides the system's (a test's own https server). */
  ca?: string;
  /** In milliseconds: to connect (TCP and TLS), to receive the response headers, and between body chunks. */
  timeouts: { connect: number; headers: number; body: number };
  /** Largest response body read, in bytes; a larger one fails the request. Unlimited when absent. */
  maxResponseSize?: number;
  /** Connections kept per origin. */
  connections?: number;
}

/** Why `address` must not be connected to (its kind), or null when it may. */
function refusedKind(address: string, allowLoopback: boolean): string | null {
  const kind = nonPublicAddress(address);
  return !kind || (kind === 'loopback' && allowLoopback) ? null : kind;
}

/**
 * A URL whose host is a literal IP address is connected to without any lookup, so the lookup's
 * fence never sees it: it is judged here, before the request. Null when the host is a name (the
 * connection's lookup judges it) or an allowed address.
 */
export function literalAddressRefusal(url: URL, allowLoopback = false): AddressNotAllowed | null {
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!isIP(literal)) return null;
  const kind = refusedKind(literal, allowLoopback);
  return kind ? new AddressNotAllowed(kind) : null;
}

/**
 * A lookup that resolves as the system (or the given resolver) does, then fails with
 * AddressNotAllowed if any address it gives is not public. Used as a connection's own lookup, the
 * connection goes to the very address checked, so a name that resolves to a public address once
 * and to 127.0.0.1 or 169.254.169.254 later (DNS rebinding) is refused at that connection.
 */
export function publicOnlyLookup(options: PublicOnlyOptions = {}): LookupFunction {
  const resolve = options.resolve ?? (systemLookup as unknown as LookupFunction);
  const allowLoopback = options.allowLoopback ?? false;
  return (hostname, lookupOptions, callback) => {
    resolve(hostname, { ...lookupOptions, all: true }, (err, result, family) => {
      if (err) return callback(err, '', 0);
      const addresses: LookupAddress[] = Array.isArray(result) ? result : [{ address: result, family: family ?? isIP(result) }];
      const kind = addresses.map((a) => refusedKind(a.address, allowLoopback)).find(Boolean);
      if (kind) return callback(new AddressNotAllowed(kind), '', 0);
      if (!addresses.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if (lookupOptions.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/**
 * An undici Agent for requests made on someone else's word (a vendor's URL): every connection it
 * opens goes only to a public address (loopback too when `allowLoopback`). Requests through it
 * must still be checked with `literalAddressRefusal` first, and must not follow redirects.
 */
export function publicOnlyAgent(options: PublicOnlyAgentOptions): Agent {
  return new Agent({
    connect: { lookup: publicOnlyLookup(options), timeout: options.timeouts.connect, ...(options.ca ? { ca: options.ca } : {}) },
    headersTimeout: options.timeouts.headers,
    bodyTimeout: options.timeouts.body,
    ...(options.maxResponseSize === undefined ? {} : { maxResponseSize: options.maxResponseSize }),
    keepAliveTimeout: 10_000,
    connections: options.connections ?? 8,
  });
}
