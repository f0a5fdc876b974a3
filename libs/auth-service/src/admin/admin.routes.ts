import express, { Router, type RequestHandler } from 'express';
import { errors } from '@trading/errors';
import { z } from '@trading/config';
import type { TokenSigner } from '../keys/token-signer';
import type { PersonalAccessToken } from '../pat/pat.entity';
import type { PatService } from '../pat/pat.service';
import { adminCredential } from './credential';
import { adminKeyRoutes } from './keys.routes';
import { adminAppRoutes } from '../registry/admin-apps.routes';
import type { RegistryService } from '../registry/registry.service';
import { lastValidDay } from '../web/dates';
import { PASSWORD_RULES, type UsersService } from '../users/users.service';

/** The service team's API (used by `npm run admin`), guarded by the admin credential from config. */
export function adminRoutes(
  adminToken: string,
  users: UsersService,
  pats: PatService,
  registry: RegistryService,
  signer: TokenSigner,
  backOffice: Router,
): Router {
  const router = Router();
  router.use('/admin', requireAdmin(adminToken), express.json({ limit: '64kb' }));

  router.post('/admin/users', async (req, res) => {
    const input = parse(newUserSchema, req.body);
    const user = await users.create(input);
    res.status(201).json({
      userId: user.id,
      email: user.email,
      firstName: user.firstName,
      lastName: user.lastName,
      createdAt: user.createdAt.toISOString(),
    });
  });

  router.get('/admin/users', async (req, res) => {
    const limit = Math.min(Math.max(Number(req.query['limit'] ?? 100) || 100, 1), 500);
    const after = typeof req.query['after'] === 'string' ? req.query['after'] : undefined;
    const page = await users.list({ limit, after });
    res.json({
      users: page.map((u) => ({
        userId: u.id,
        email: u.email,
        firstName: u.firstName,
        lastName: u.lastName,
        createdAt: u.createdAt.toISOString(),
      })),
      next: page.length === limit ? page[page.length - 1]!.email : null,
    });
  });

  router.get('/admin/pats', async (req, res) => {
    const user = await users.requireByEmail(
      String(parse(z.object({ email: z.string().email('must be an e-mail address') }), req.query).email),
    );
    res.json({ email: user.email, tokens: (await pats.listForUser(user.id)).map(patSummary) });
  });

  router.post('/admin/pats/:tokenId/revoke', async (req, res) => {
    const input = parse(z.object({ email: z.string().email('must be an e-mail address') }), req.body);
    const user = await users.requireByEmail(input.email);
    res.json(patSummary(await pats.revoke(user.id, req.params['tokenId'])));
  });

  router.post('/admin/pats', async (req, res) => {
    const input = parse(newPatSchema, req.body);
    const user = await users.requireByEmail(input.email);
    const { token, pat } = await pats.create({
      userId: user.id,
      name: input.name,
      access: input.scope,
      expires: input.expires,
      ipAllowlist: input.ips,
    });
    res.status(201).json({
      token,
      tokenId: pat.id,
      userId: user.id,
      name: pat.name,
      scope: pat.access,
      ips: pat.ipAllowlist,
      expiresAt: pat.expiresAt.toISOString(),
      validThrough: lastValidDay(pat.expiresAt),
      createdAt: pat.createdAt.toISOString(),
    });
  });
  router.use(adminAppRoutes(registry), adminKeyRoutes(signer), backOffice);
  return router;
}

/** A PAT as the service team sees it: never the secret (only its hash is kept). */
const patSummary = (pat: PersonalAccessToken) => ({
  tokenId: pat.id,
  name: pat.name,
  scope: pat.access,
  ips: pat.ipAllowlist,
  createdAt: pat.createdAt.toISOString(),
  /** The exclusive end of the chosen day is `expiresAt`; people are shown the day itself (the last valid one). */
  expiresAt: pat.expiresAt.toISOString(),
  validThrough: lastValidDay(pat.expiresAt),
  revokedAt: pat.revokedAt?.toISOString() ?? null,
  lastUsedAt: pat.lastUsedAt?.toISOString() ?? null,
});

const newUserSchema = z.object({
  email: z.string().email('must be an e-mail address'),
  password: z.string().min(PASSWORD_RULES.min, `must be at least ${PASSWORD_RULES.min} characters`).max(PASSWORD_RULES.max),
  firstName: z.string().trim().min(1, 'is required').max(100),
  lastName: z.string().trim().min(1, 'is required').max(100),
});

const newPatSchema = z.object({
  email: z.string().email('must be an e-mail address'),
  name: z.string(),
  scope: z.string(),
  expires: z.string(),
  ips: z.array(z.string()).default([]),
});

/** Zod parse whose first problem becomes a 400 naming the field. */
function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.join('.') || 'body';
  throw errors.badInput(field, `${field} ${issue.message}`);
}

function requireAdmin(adminToken: string): RequestHandler {
  const isAdmin = adminCredential(adminToken);
  return (req, _res, next) => next(isAdmin(req) ? undefined : errors.unauthenticated('The admin API needs the admin credential'));
}
