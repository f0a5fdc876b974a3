import type { DataSource, Repository } from 'typeorm';
import { errors } from '@trading/errors';
import { CursorCodec, parseDateRange, parseLimit } from '@trading/pagination';
import { PatLoginAttemptEntity, type LoginFailureReason, type LoginOutcome, type PatLoginAttempt } from './login-attempt.entity';

export interface AttemptRecord {
  tokenId?: string;
  userId?: string;
  ip?: string;
  userAgent?: string;
  /** Absent on success. */
  reason?: LoginFailureReason;
  at?: Date;
}

/** One row of a user's login activity as they may see it: no failure reason (it stays server-side). */
export interface LoginActivityItem {
  at: string;
  tokenId: string | null;
  tokenName: string | null;
  ip: string | null;
  userAgent: string | null;
  outcome: LoginOutcome;
}

export interface ActivityQuery {
  limit?: unknown;
  cursor?: unknown;
  from?: unknown;
  to?: unknown;
}

const USER_AGENT_MAX = 512;

/** Records every PAT login attempt and pages through one user's, newest first. */
export class LoginActivityService {
  private readonly attempts: Repository<PatLoginAttempt>;
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
  ) {
    this.attempts = dataSource.getRepository(PatLoginAttemptEntity);
  }

  async record(attempt: AttemptRecord): Promise<void> {
    await this.attempts.insert({
      // Millisecond precision on purpose: the cursor carries `at` as a JavaScript Date.
      at: attempt.at ?? new Date(),
      tokenId: attempt.tokenId ?? null,
      userId: attempt.userId ?? null,
      ip: attempt.ip ?? null,
      userAgent: attempt.userAgent ? attempt.userAgent.slice(0, USER_AGENT_MAX) : null,
      outcome: attempt.reason ? 'FAILURE' : 'SUCCESS',
      reason: attempt.reason ?? null,
    });
  }

  /** `limit` 1..100 (default 20), opaque `cursor`, `from`/`to` dates; bad values are 400s naming the field. */
  async list(userId: string, query: ActivityQuery): Promise<{ logins: LoginActivityItem[]; nextCursor: string | null }> {
    const limit = parseLimit(query.limit);
    const { from, to } = parseDateRange(query.from, query.to);
    const scope = `pat-logins:${userId}`;
    const after = this.cursors.decode<{ at: string; id: string }>(query.cursor, scope, ['at', 'id']);
    const afterAt = after ? new Date(after.at) : null;
    if (after && (Number.isNaN(afterAt!.getTime()) || !/^\d{1,19}$/.test(after.id))) {
      // Only reachable with a cursor we signed ourselves, but never let it become a 500.
      throw errors.badInput('cursor', 'cursor is not a cursor this list returned');
    }
    const rows: Array<{
      id: string;
      at: Date;
      token_id: string | null;
      token_name: string | null;
      ip: string | null;
      user_agent: string | null;
      outcome: LoginOutcome;
    }> = await this.dataSource.query(
      `SELECT a.id, a.at, a.token_id, t.name AS token_name, a.ip, a.user_agent, a.outcome
           FROM pat_login_attempts a
           LEFT JOIN personal_access_tokens t ON t.id = a.token_id
          WHERE a.user_id = $1
            AND ($2::timestamptz IS NULL OR a.at >= $2)
            AND ($3::timestamptz IS NULL OR a.at < $3)
            AND ($4::timestamptz IS NULL OR (a.at, a.id) < ($4, $5::bigint))
          ORDER BY a.at DESC, a.id DESC
          LIMIT $6`,
      [userId, from, to, afterAt, after?.id ?? null, limit + 1],
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      logins: page.map((r) => ({
        at: r.at.toISOString(),
        tokenId: r.token_id,
        tokenName: r.token_name,
        ip: r.ip,
        userAgent: r.user_agent,
        outcome: r.outcome,
      })),
      nextCursor: rows.length > limit && last ? this.cursors.encode(scope, { at: last.at.toISOString(), id: String(last.id) }) : null,
    };
  }
}
