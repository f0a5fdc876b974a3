import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { bearerToken } from '@trading/auth';
import type { Logger } from '@trading/logging';

/**
 * One audit line per admin API call, refused ones too: who (a fingerprint of the credential
 * presented, never the credential, and the client address), what (method, path, status) and
 * when. Bodies are not logged: they hold passwords.
 */
export function adminAudit(adminToken: string, logger: Logger): RequestHandler {
  const fingerprint = (token: string) => createHash('sha256').update(token).digest('hex').slice(0, 12);
  const expected = fingerprint(adminToken);
  return (req, res, next) => {
    const presented = bearerToken(req.get('authorization'));
    res.on('finish', () => {
      const who = presented === undefined ? 'none' : fingerprint(presented) === expected ? `admin-token:${expected}` : 'invalid-credential';
      logger.info(
        {
          audit: 'admin',
          who,
          address: req.ip,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          at: new Date().toISOString(),
          requestId: req.requestId,
        },
        'admin API call',
      );
    });
    next();
  };
}
