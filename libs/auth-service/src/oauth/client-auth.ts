import type { Request, Response } from 'express';
import type { Client } from '../registry/registry.service';
import { assertionIssuer, clientAssertionProblem, JWT_BEARER_ASSERTION } from './client-assertion';
import type { OAuthContext } from './context';
import {
  countFailure,
  failuresBlocked,
  failuresRefused,
  spendClientBudget,
  type ClientLimits,
  type FailuresBlocked,
} from './client-limits';
import { oauthErrors } from './errors';

export type Params = Record<string, string | undefined>;

/**
 * The parameters of a token or revocation request, JSON (as documented) or form-encoded
 * (RFC 6749): strings only, none repeated (RFC 6749 §3.2), empty ones treated as absent.
 */
export function requestParams(req: Request): Params {
  if (!req.is('application/x-www-form-urlencoded') && !req.is('application/json')) {
    throw oauthErrors.invalidRequest('Content-Type must be application/x-www-form-urlencoded or application/json');
  }
  const body = req.body as unknown;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw oauthErrors.invalidRequest('The request body must be an object of parameters');
  const out: Params = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (Array.isArray(value)) throw oauthErrors.invalidRequest(`${key} must not be repeated`);
    if (value === null || value === undefined || value === '') continue;
    if (typeof value !== 'string') throw oauthErrors.invalidRequest(`${key} must be a string`);
    out[key] = value;
  }
  return out;
}

/** RFC 6749 §2.3.1: `Basic base64(urlencode(id):urlencode(secret))`. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) {
    if (/^Basic\b/i.test(header ?? '')) throw oauthErrors.invalidClient('Malformed HTTP Basic credentials');
    return null;
  }
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw oauthErrors.invalidClient('Malformed HTTP Basic credentials');
  try {
    const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
  } catch {
    throw oauthErrors.invalidClient('Malformed HTTP Basic credentials');
  }
}

/**
 * Authenticates the client by HTTP Basic, by client_id/client_secret in the body, or by a signed
 * client assertion (private_key_jwt; one method only). A client registered for private_key_jwt
 * is refused with its secret. Failures count per (client, address) and per address; once over the limit, a wrong
 * secret gets 429 (uncounted), the right one still goes through. Then the client's budget.
 */
export async function authenticateClient(
  ctx: OAuthContext,
  req: Request,
  res: Response,
  params: Params,
  limits: ClientLimits,
): Promise<Client> {
  const basic = basicCredentials(req.get('authorization'));
  if (params['client_assertion'] !== undefined || params['client_assertion_type'] !== undefined)
    return authenticateByAssertion(ctx, req, res, params, limits, !!basic);
  const { id, secret } = secretCredentials(basic, params);

  // Both at once (one Redis and one PostgreSQL round trip in flight together): whether failures
  // from here are over the limit matters only if the secret turns out wrong.
  const [blocked, client] = await Promise.all([
    failuresBlocked(limits, id, req),
    ctx.registry.authenticate(id, secret, ctx.settings.environment, { includeSuspended: true }),
  ]);
  if (!client)
    return failedAuthentication(
      limits,
      id,
      req,
      blocked,
      `Client authentication failed (unknown client, wrong secret, or credentials of another environment than ${ctx.settings.environment})`,
    );
  // A client registered for private_key_jwt has left its secret behind (in this environment): it counts as a failure.
  if (client.tokenEndpointAuthMethod === 'private_key_jwt')
    return failedAuthentication(
      limits,
      id,
      req,
      blocked,
      'This client authenticates with private_key_jwt (client_assertion); its client secret is not accepted',
    );
  if (client.app.status !== 'ACTIVE') throw oauthErrors.unauthorizedClient('This app is suspended');
  await spendClientBudget(limits, client.clientId, res);
  return client;
}

/** The client id and secret, by HTTP Basic or in the body (one method only). */
function secretCredentials(basic: { id: string; secret: string } | null, params: Params): { id: string; secret: string } {
  if (basic && params['client_secret'] !== undefined)
    throw oauthErrors.invalidRequest('Use one client authentication method: HTTP Basic or client_secret in the body, not both');
  if (basic && params['client_id'] !== undefined && params['client_id'] !== basic.id)
    throw oauthErrors.invalidRequest('client_id does not match the HTTP Basic credentials');
  const id = basic?.id ?? params['client_id'];
  const secret = basic?.secret ?? params['client_secret'];
  if (!id || !secret)
    throw oauthErrors.invalidClient('Client authentication is required: HTTP Basic, or client_id and client_secret in the body');
  return { id, secret };
}

/** A failed client authentication: 429 once over the limit (uncounted), else counted and refused. */
async function failedAuthentication(
  limits: ClientLimits,
  id: string,
  req: Request,
  blocked: FailuresBlocked | null,
  message: string,
): Promise<never> {
  if (blocked) throw failuresRefused(limits, blocked);
  await countFailure(limits, id, req);
  throw oauthErrors.invalidClient(message);
}

/**
 * private_key_jwt (RFC 7523 §2.2): client_assertion_type and client_assertion, and no other
 * client credential. A failing assertion counts as a failed client authentication, exactly as a
 * wrong secret does (per client and address, per address); once over the limit, a failing one
 * gets 429 and a valid one still passes.
 */
async function authenticateByAssertion(
  ctx: OAuthContext,
  req: Request,
  res: Response,
  params: Params,
  limits: ClientLimits,
  basic: boolean,
): Promise<Client> {
  if (basic || params['client_secret'] !== undefined)
    throw oauthErrors.invalidRequest('Use one client authentication method: a client assertion, HTTP Basic or client_secret, not several');
  if (params['client_assertion_type'] !== JWT_BEARER_ASSERTION)
    throw oauthErrors.invalidRequest(`client_assertion_type must be ${JWT_BEARER_ASSERTION}`);
  const assertion = params['client_assertion'];
  if (!assertion) throw oauthErrors.invalidRequest('client_assertion is required with client_assertion_type');
  const id = assertionIssuer(assertion);
  if (!id) throw oauthErrors.invalidClient('client_assertion must be a signed JWT whose iss is the client_id');
  if (params['client_id'] !== undefined && params['client_id'] !== id)
    throw oauthErrors.invalidRequest("client_id does not match the client assertion's iss");

  const [blocked, client] = await Promise.all([
    failuresBlocked(limits, id, req),
    ctx.registry.findClient(id, ctx.settings.environment, { includeSuspended: true }),
  ]);
  const problem = client
    ? await clientAssertionProblem(ctx, client, assertion)
    : `unknown client, or a client of another environment than ${ctx.settings.environment}`;
  if (problem || !client) {
    if (blocked) throw failuresRefused(limits, blocked);
    await countFailure(limits, id, req);
    throw oauthErrors.invalidClient(`Client authentication failed: ${problem}`);
  }
  if (client.app.status !== 'ACTIVE') throw oauthErrors.unauthorizedClient('This app is suspended');
  await spendClientBudget(limits, client.clientId, res);
  return client;
}
