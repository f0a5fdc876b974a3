import { EntitySchema } from 'typeorm';

/** Why a login was refused: recorded for support, never sent to the caller. */
export type LoginFailureReason = 'MALFORMED' | 'UNKNOWN_TOKEN' | 'WRONG_SECRET' | 'REVOKED' | 'EXPIRED' | 'IP_NOT_ALLOWED' | 'RATE_LIMITED';
export type LoginOutcome = 'SUCCESS' | 'FAILURE';

export interface PatLoginAttempt {
  /** bigint, so a string in JavaScript. */
  id: string;
  /** Set by the app at millisecond precision, so cursors built from a JavaScript Date match exactly. */
  at: Date;
  tokenId: string | null;
  userId: string | null;
  ip: string | null;
  userAgent: string | null;
  outcome: LoginOutcome;
  reason: LoginFailureReason | null;
}

export const PatLoginAttemptEntity = new EntitySchema<PatLoginAttempt>({
  name: 'PatLoginAttempt',
  tableName: 'pat_login_attempts',
  columns: {
    id: { type: 'bigint', primary: true, generated: 'increment' },
    at: { type: 'timestamptz' },
    tokenId: { type: 'text', name: 'token_id', nullable: true },
    userId: { type: 'uuid', name: 'user_id', nullable: true },
    ip: { type: 'text', nullable: true },
    userAgent: { type: 'text', name: 'user_agent', nullable: true },
    outcome: { type: 'text' },
    reason: { type: 'text', nullable: true },
  },
});
