import { randomBytes } from 'node:crypto';
import { isIP, type LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { request, type Agent, type Dispatcher } from 'undici';
import { AddressNotAllowed, literalAddressRefusal, publicOnlyAgent, publicOnlyLookup } from '@trading/auth';

export type WebhookEnvironment = 'DEV' | 'UAT' | 'PROD';

export const WEBHOOK_URL_MAX_LENGTH = 2000;
/** How much of a receiver's answer is kept, to show the vendor what its endpoint said. */
export const WEBHOOK_SNIPPET_BYTES = 1024;
const CONNECT_TIMEOUT_MS = 3000;
const REQUEST_TIMEOUT_MS = 10_000;
/** In DEV a vendor may point webhooks at its own machine, by these hosts only, over http or https. */
const DEV_LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const NOT_PUBLIC =
  'the url leads to an address that is not public (loopback, private, link-local or reserved); webhooks are sent to public addresses only';

type ParsedUrl = { url: URL; local: boolean } | { problem: string };

/** What can be judged from the URL's text alone: its shape and scheme, and whether it is one of DEV's local hosts. */
function parseWebhookUrl(raw: string, environment: WebhookEnvironment): ParsedUrl {
  if (raw.length > WEBHOOK_URL_MAX_LENGTH) return { problem: `the url is longer than ${WEBHOOK_URL_MAX_LENGTH} characters` };
  // The URL parser would silently drop these; the registered URL is the one that is called.
  if (/[\s\p{Cc}]/u.test(raw)) return { problem: 'the url must not contain spaces or control characters' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'the url is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: 'the url must be an https URL' };
  if (url.username || url.password) return { problem: 'the url must not carry credentials (user:password@)' };
  if (raw.includes('#')) return { problem: 'the url must not have a fragment (#…)' };
  const local = environment === 'DEV' && DEV_LOCAL_HOSTS.has(url.hostname);
  if (url.protocol === 'http:' && !local)
    return {
      problem: environment === 'DEV' ? 'the url must be https, or http to localhost, 127.0.0.1 or [::1]' : 'the url must be an https URL',
    };
  return { url, local };
}

/** Why the addresses `hostname` resolves to are refused, or null when all are public. */
function resolvedProblem(hostname: string, resolve?: LookupFunction): Promise<string | null> {
  return new Promise((settle) => {
    publicOnlyLookup({ resolve })(hostname, { all: true }, (err) => {
      if (!err) settle(null);
      else if (err instanceof AddressNotAllowed) settle(NOT_PUBLIC);
      else settle(`the url's host ${hostname} does not resolve to any address`);
    });
  });
}

/**
 * Why a vendor may not register `url` for webhooks in `environment` (a sentence for a 422 on
 * field `url`), or null when it may. Outside DEV only https to public addresses; in DEV also http
 * or https to the vendor's own machine (localhost, 127.0.0.1, [::1]). A host name is resolved now
 * to catch a mistake early; each delivery checks its addresses again.
 */
export async function webhookUrlProblem(url: string, environment: WebhookEnvironment, resolve?: LookupFunction): Promise<string | null> {
  const parsed = parseWebhookUrl(url, environment);
  if ('problem' in parsed) return parsed.problem;
  if (parsed.local) return null;
  if (literalAddressRefusal(parsed.url)) return NOT_PUBLIC;
  if (isIP(parsed.url.hostname.replace(/^\[(.*)\]$/, '$1'))) return null;
  return resolvedProblem(parsed.url.hostname, resolve);
}

export interface WebhookSenderOptions {
  /** How host names are resolved (the system's resolver by default). */
  resolve?: LookupFunction;
  /** Certificates to trust besides the system's (a test's own https server). */
  ca?: string;
  /** To connect (TCP and TLS), 3 s by default. */
  connectTimeoutMs?: number;
  /** For the whole request, from connecting to the last byte read, 10 s by default. */
  requestTimeoutMs?: number;
}

export interface WebhookRequest {
  headers: Record<string, string>;
  body: string;
}

/** How one delivery went: delivered when `status` is 2xx. `status` is null when no answer came, and `error` says why. */
export interface WebhookDelivery {
  status: number | null;
  durationMs: number;
  responseSnippet: string;
  error: string | null;
}

/**
 * Posts webhooks to the URLs vendors register. A URL is the vendor's word, so every connection
 * goes only to a public address, checked at connection time (a name rebound to 127.0.0.1 since
 * registration is refused); in DEV, loopback too but only for localhost, 127.0.0.1 and [::1].
 * Redirects are never followed, and of the answer only its status and first 1 KiB are kept.
 */
export class WebhookSender {
  private readonly publicOnly: Agent;
  /** DEV's local hosts only: loopback allowed, every other non-public address still refused. */
  private readonly local: Agent;
  private readonly requestTimeoutMs: number;

  constructor(options: WebhookSenderOptions = {}) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    const timeouts = {
      connect: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      headers: this.requestTimeoutMs,
      body: this.requestTimeoutMs,
    };
    const common = { resolve: options.resolve, ca: options.ca, timeouts, connections: 8 };
    this.publicOnly = publicOnlyAgent({ ...common, allowLoopback: false });
    this.local = publicOnlyAgent({ ...common, allowLoopback: true });
  }

  async post(url: string, message: WebhookRequest, environment: WebhookEnvironment): Promise<WebhookDelivery> {
    const started = performance.now();
    const outcome = (status: number | null, responseSnippet: string, error: string | null): WebhookDelivery => ({
      status,
      durationMs: Math.round(performance.now() - started),
      responseSnippet,
      error,
    });
    const parsed = parseWebhookUrl(url, environment);
    if ('problem' in parsed) return outcome(null, '', parsed.problem);
    if (!parsed.local && literalAddressRefusal(parsed.url)) return outcome(null, '', 'address not allowed');
    const headers = Object.fromEntries(Object.entries(message.headers).filter(([name]) => name.toLowerCase() !== 'content-type'));
    try {
      const res = await request(parsed.url, {
        dispatcher: parsed.local ? this.local : this.publicOnly,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: message.body,
        signal: AbortSignal.timeout(this.requestTimeoutMs),
      });
      return outcome(res.statusCode, await snippetOf(res.body), null);
    } catch (err) {
      return outcome(null, '', failureOf(err));
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.publicOnly.close(), this.local.close()]);
  }
}

/**
 * The first 1 KiB of an answer as text, without control characters (shown to the vendor as is).
 * The rest is not read: the stream is dropped, closing the connection, so an endless answer costs
 * nothing. A body cut short by the timeout keeps what came; the status is the answer.
 */
async function snippetOf(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= WEBHOOK_SNIPPET_BYTES) break;
    }
  } catch {
    // The answer's status is already known; only the snippet is short.
  } finally {
    body.destroy();
  }
  // `stream: true` leaves out a character cut in half at the 1 KiB mark instead of garbling it.
  const text = new TextDecoder('utf-8').decode(Buffer.concat(chunks).subarray(0, WEBHOOK_SNIPPET_BYTES), { stream: true });
  return text.replace(/[\t\n\r]/g, ' ').replace(/[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, '');
}

/** Why no answer came, by the error's code, in a few words (the vendor sees them). */
const FAILURES: Record<string, string> = {
  // Only the request's own timeout aborts it.
  UND_ERR_ABORTED: 'timed out',
  UND_ERR_HEADERS_TIMEOUT: 'timed out',
  UND_ERR_BODY_TIMEOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  ENOTFOUND: 'host name did not resolve',
  EAI_AGAIN: 'host name did not resolve',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection closed without an answer',
  UND_ERR_SOCKET: 'connection closed without an answer',
};

function failureOf(err: unknown): string {
  if (err instanceof AddressNotAllowed) return 'address not allowed';
  const { code, name } = (err ?? {}) as { code?: unknown; name?: unknown };
  if (name === 'TimeoutError' || name === 'AbortError') return 'timed out';
  const text = typeof code === 'string' ? code : '';
  if (/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(text)) return 'TLS handshake failed';
  return FAILURES[text] ?? 'request failed';
}

/**
 * The Standard Webhooks headers for one message: one `v1,<base64>` signature per secret,
 * space-separated, so that during a rotation a receiver holding either the current or the
 * previous secret can verify it.
 */
export function signatureHeaders(
  secrets: string[],
  messageId: string,
  timestamp: Date,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  if (!secrets.length) throw new Error('a webhook is signed with at least one secret');
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body)).join(' '),
  };
}

/** A new signing secret as Standard Webhooks writes it: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
