import { Router } from 'express';
import { AppError } from '@trading/errors';
import type { UsersService } from '../users/users.service';
import type { BackOffice } from './back-office';

interface BackOfficeAccount {
  accountId: string;
  userId: string;
  number: string;
  type: string;
  status: string;
  baseCurrency: string;
  createdAt: string;
}

const body = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const email = (value: unknown): string => {
  if (typeof value !== 'string' || !value.includes('@'))
    throw new AppError('BAD_USER_INPUT', 'email must be an e-mail address', { field: 'email' });
  return value;
};

/**
 * The back office in the admin API (same credential, audit and listener as the rest of it):
 *   POST /admin/accounts                 {email, type, currency} → 201 the new account
 *   GET  /admin/accounts?email=          → {accounts}
 *   POST /admin/accounts/:id/close       → the closed account | 409 {reasons}
 *   GET  /admin/instruments              → {instruments}
 *   POST /admin/instruments              {symbol, name, currency, tickSize, lotSize?, price} → 201
 *   POST /admin/instruments/:symbol/halt | resume → the instrument
 * Users are auth's; accounts, cash and orders belong to their domains, asked on their internal APIs.
 */
export function backOfficeRoutes(users: UsersService, office: BackOffice): Router {
  const router = Router();

  router.post('/admin/accounts', async (req, res) => {
    const input = body(req.body);
    const user = await users.requireByEmail(email(input['email']));
    const account = await office.post<BackOfficeAccount>('accounts', '/accounts', {
      userId: user.id,
      type: input['type'],
      currency: input['currency'],
    });
    res.status(201).json({ ...account, email: user.email });
  });

  router.get('/admin/accounts', async (req, res) => {
    const user = await users.requireByEmail(email(req.query['email']));
    const { accounts } = await office.get<{ accounts: BackOfficeAccount[] }>('accounts', '/accounts', { userId: user.id });
    res.json({ email: user.email, accounts });
  });

  /**
   * Closing: accounts restricts the account (nothing new starts), banking and the OMS say what
   * they still hold for it, and accounts closes it or restores it with every reason.
   */
  router.post('/admin/accounts/:id/close', async (req, res) => {
    const id = encodeURIComponent(String(req.params['id']));
    const { previousStatus } = await office.post<{ account: BackOfficeAccount; previousStatus: string }>(
      'accounts',
      `/accounts/${id}/closing`,
    );
    let blockers: string[];
    try {
      const answers = await Promise.all([
        office.get<{ blockers: string[] }>('oms', `/accounts/${id}/closing-blockers`),
        office.get<{ blockers: string[] }>('banking', `/accounts/${id}/closing-blockers`),
      ]);
      blockers = answers.flatMap((a) => a.blockers);
    } catch (err) {
      // Someone could not answer: put the account back as it was and say so.
      await office
        .post('accounts', `/accounts/${id}/close`, { blockers: ['a service could not confirm what remains'], restoreTo: previousStatus })
        .catch(() => undefined);
      throw err;
    }
    res.json(await office.post<BackOfficeAccount>('accounts', `/accounts/${id}/close`, { blockers, restoreTo: previousStatus }));
  });

  router.get('/admin/instruments', async (_req, res) => {
    res.json(await office.get('oms', '/instruments'));
  });
  router.post('/admin/instruments', async (req, res) => {
    res.status(201).json(await office.post('oms', '/instruments', body(req.body)));
  });
  for (const action of ['halt', 'resume']) {
    router.post(`/admin/instruments/:symbol/${action}`, async (req, res) => {
      res.json(await office.post('oms', `/instruments/${encodeURIComponent(String(req.params['symbol']))}/${action}`));
    });
  }
  return router;
}
