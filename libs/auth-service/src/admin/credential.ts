import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { bearerToken } from '@trading/auth';

/**
 * Whether a request presents the admin credential. Digests are compared, so the comparison is
 * constant-time whatever the presented length.
 */
export function adminCredential(adminToken: string): (req: Request) => boolean {
  const expected = createHash('sha256').update(adminToken).digest();
  return (req) => {
    const presented = bearerToken(req.get('authorization'));
    return presented !== undefined && timingSafeEqual(createHash('sha256').update(presented).digest(), expected);
  };
}
