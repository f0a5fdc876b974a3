import { createHash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { bearerToken } from '@trading/auth';
import type { Logger } from '@trading/logging';

/**
 * One audit line per admin API call, refused ones too: who (a fingerprint of the credential
 * presented, never the credential, and the client address), what (method, path, status) and
 * when. Bodies are not logged: they hold passwords.
 *
 * Written at info by a logger of its own whatever LOG_LEVEL says (the all-in-one runs at warn):
 * an audit trail that a log level can switch off is none. Same destination as every other line.
 * Only `silent`, which asks for no output at all (tests, embedding), silences it too.
 */
export function adminAudit(adminToken: string, logger: Logger, isAdmin: (req: Request) => boolean): RequestHandler {
  const audit = logger.level === 'silent' ? logger : logger.child({}, { level: 'info' });
  const fingerprint = createHash('sha256').update(adminToken).digest('hex').slice(0, 12);
  return (req, res, next) => {
    const presented = bearerToken(req.get('authorization'));
    const who = presented === undefined ? 'none' : isAdmin(req) ? `admin-token:${fingerprint}` : 'invalid-credential';
    res.on('finish', () => {
      audit.info(
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
