import { z } from '@trading/config';
import { cursor, named, text, timestamp } from './kit';

/** What the personal access token endpoints (/v1/pat/…) answer. Every object is closed: a field not listed here is a bug. */
const o = z.strictObject;
const list = <S extends z.ZodType>(items: S) => z.array(items);

export const patLoginResponse = named('PatLoginResponse', o({ userId: text, token: text.meta({ description: 'Session JWT' }) }));
export const patRevokeResponse = named('PatRevokeResponse', o({ tokenId: text, revokedAt: timestamp }));
const patLogin = named(
  'PatLogin',
  o({
    at: timestamp,
    tokenId: text.nullable(),
    tokenName: text.nullable(),
    ip: text.nullable(),
    userAgent: text.nullable(),
    outcome: z.enum(['SUCCESS', 'FAILURE']),
  }),
);
export const patLoginActivityPage = named('PatLoginActivityPage', o({ logins: list(patLogin), nextCursor: cursor }));
