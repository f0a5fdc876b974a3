import { tightest, type FailureLimiter, type LimitState } from '@trading/rate-limit';
import type { LoginActivityService } from './login-activity.service';
import type { PatService } from './pat.service';
import { tokenIdOf } from './pat-token';

export interface LoginRequest {
  token: unknown;
  ip?: string;
  userAgent?: string;
  /** DPoP: the thumbprint of the key the session token is to be bound to. */
  jkt?: string;
}

export type LoginAnswer =
  | { outcome: 'ok'; session: { userId: string; token: string }; limit: LimitState }
  | { outcome: 'refused'; limit: LimitState }
  | { outcome: 'throttled'; limit: LimitState };

/**
 * POST /pat/login as a whole: try the token; a failure counts per client address and per token
 * id and is recorded for the owner's activity. Once a limit is reached, failures are refused
 * with 429 and neither counted nor recorded (so a flood writes nothing), but a valid token is
 * never refused: its secret has ~190 bits, so throttling a correct one protects nothing, and a
 * NAT or CI runner full of scripts must not be locked out by one bad neighbour.
 */
export class PatLogin {
  constructor(
    private readonly pats: PatService,
    private readonly activity: LoginActivityService,
    private readonly limits: { perIp: FailureLimiter; perToken: FailureLimiter },
  ) {}

  async attempt(request: LoginRequest): Promise<LoginAnswer> {
    const at = new Date();
    const tokenId = tokenIdOf(request.token);
    const ipKey = request.ip ?? 'unknown';
    const before = await this.states(ipKey, tokenId, (l, k) => l.state(k));
    const base = { tokenId, ip: request.ip, userAgent: request.userAgent, at };

    const current = tightest(before);
    const result = await this.pats.login(request.token, request.ip, at, request.jkt);
    if (result.ok) {
      await this.activity.record({ ...base, userId: result.pat.userId });
      return { outcome: 'ok', session: result.session, limit: current };
    }
    if (current.blocked) return { outcome: 'throttled', limit: current };
    const after = await this.states(ipKey, tokenId, (l, k) => l.fail(k));
    // A mistyped or guessed secret for a real token id still shows in that token owner's activity.
    const userId = result.pat?.userId ?? (tokenId && (await this.pats.ownerOf(tokenId)));
    await this.activity.record({ ...base, userId, reason: result.reason });
    return { outcome: 'refused', limit: tightest(after) };
  }

  private states(
    ipKey: string,
    tokenId: string | undefined,
    op: (limiter: FailureLimiter, key: string) => Promise<LimitState>,
  ): Promise<LimitState[]> {
    return Promise.all([op(this.limits.perIp, ipKey), ...(tokenId ? [op(this.limits.perToken, tokenId)] : [])]);
  }
}
