import type { InternalClaimsSigner } from '@trading/auth';
import { CLIENT_ADDRESS_HEADER } from '@trading/auth';
import type { Logger } from '@trading/logging';

/** Auth's internal endpoint (libs/auth-service/src/internal/web-origins.route.ts). */
const WEB_ORIGINS_PATH = '/internal/web-origins';
/** After auth could not be asked: no origin is allowed, and auth is asked again this much later at most. */
const RETRY_AFTER_FAILURE_MS = 5000;
const FETCH_TIMEOUT_MS = 3000;

/**
 * The web origins of this deployment's active vendor apps, as auth knows them.
 *
 * The whole set (a few origins per app) is fetched from auth's internal listener and kept for
 * `ttlMs`; every `Origin` is then answered from memory. So a preflight flood, with however many
 * made-up origins, costs auth one request per facade instance per `ttlMs` and PostgreSQL one
 * query: there is no per-origin lookup to exhaust and no negative cache to fill. One refresh is
 * in flight at a time; callers arriving meanwhile wait for it. A suspended app's origins stop
 * being allowed within `ttlMs`. If auth cannot be asked, no origin is allowed (fail closed: no
 * CORS headers, browsers refuse) until it can be, retried at most every 5 s.
 *
 * The facade proves itself to auth with a signed client-address header for nobody: auth answers
 * the list to the facade's identity only.
 */
export class RegisteredOrigins {
  private origins = new Set<string>();
  private freshUntil = 0;
  private refreshing?: Promise<void>;

  constructor(
    private readonly authInternalUrl: string,
    private readonly signer: InternalClaimsSigner,
    private readonly ttlMs: number,
    private readonly logger: Logger,
  ) {}

  async has(origin: string): Promise<boolean> {
    if (Date.now() >= this.freshUntil) await (this.refreshing ??= this.refresh().finally(() => (this.refreshing = undefined)));
    return this.origins.has(origin);
  }

  private async refresh(): Promise<void> {
    try {
      const res = await fetch(new URL(WEB_ORIGINS_PATH, this.authInternalUrl), {
        headers: { [CLIENT_ADDRESS_HEADER]: await this.signer.signClientAddress('', 'auth') },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      if (!res.ok) throw new Error(`auth answered ${res.status}`);
      const body = (await res.json()) as { origins?: unknown };
      if (!Array.isArray(body.origins) || !body.origins.every((o) => typeof o === 'string'))
        throw new Error('auth answered no origin list');
      this.origins = new Set(body.origins as string[]);
      this.freshUntil = Date.now() + this.ttlMs;
    } catch (err) {
      this.origins = new Set();
      this.freshUntil = Date.now() + Math.min(this.ttlMs, RETRY_AFTER_FAILURE_MS);
      this.logger.warn({ err }, 'could not read the registered web origins from auth: no CORS answers until it can be');
    }
  }
}
