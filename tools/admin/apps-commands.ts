import { readFileSync } from 'node:fs';
import { UsageError, type Command, type Need, type Values } from './command';

/** Vendor apps: provisioning, listing, promotion, profiles, secrets and suspension. */

/**
 * The promoted environment's profile, client authentication and policy, as given (the server
 * applies the defaults: the spec profile; the single flags remain for scripts that set them).
 */
function promotionPolicy(values: Values): Record<string, unknown> {
  const policy: Record<string, unknown> = {};
  if (typeof values['profile'] === 'string') policy['profile'] = values['profile'];
  if (values['dpop-nonce']) policy['dpopNonceRequired'] = true;
  if (typeof values['token-endpoint-auth-method'] === 'string') policy['tokenEndpointAuthMethod'] = values['token-endpoint-auth-method'];
  const file = values['jwks-file'];
  if (typeof file === 'string') {
    try {
      policy['jwks'] = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new UsageError(`cannot read ${file} as JSON: ${(err as Error).message}`);
    }
  }
  if (typeof values['jwks-uri'] === 'string') policy['jwksUri'] = values['jwks-uri'];
  for (const [flag, field] of [
    ['require-par', 'requirePushedAuthorizationRequests'],
    ['require-dpop', 'dpopBoundAccessTokens'],
    ['require-mfa', 'requireSecondFactor'],
  ] as const) {
    if (values[flag] && values[`no-${flag}`]) throw new UsageError(`give --${flag} or --no-${flag}, not both`);
    if (values[flag]) policy[field] = true;
    if (values[`no-${flag}`]) policy[field] = false;
  }
  return policy;
}

/** Issued credentials: the secret is printed once, here. */
const printCredentials = (r: Record<string, unknown>, what: string) =>
  `${what} "${r['appName']}" (app ${r['appId']}) in ${r['environment']}\n\n  client_id      ${r['clientId']}\n  client_secret  ${r['clientSecret']}\n  redirect URIs  ${(r['redirectUris'] as string[]).join(' ')}\n  web origins    ${((r['webOrigins'] as string[] | undefined) ?? []).join(' ') || '(none)'}\n  scopes         ${(r['approvedScopes'] as string[]).join(' ')}\n  profile        ${r['profile']}\n  client auth    ${r['tokenEndpointAuthMethod']}\n  PAR required   ${r['requirePushedAuthorizationRequests'] ? 'yes' : 'no'}\n  DPoP required  ${r['dpopBoundAccessTokens'] ? 'yes' : 'no'}\n  2nd factor     ${r['requireSecondFactor'] ? 'required to consent' : 'not required'}\n\nThe secret is shown only this once (and mailed to ${r['businessEmail']}): store it now.`;

/** An app in `apps list`: each environment's client id, redirect URIs, web origins and client authentication. */
const appListing = (a: Record<string, any>) =>
  `${a['appId']}  ${a['appName']} (${a['companyName']})  ${a['status']}  furthest: ${a['environment']}  scopes: ${a['approvedScopes'].join(' ')}\n` +
  (a['environments'] as Array<Record<string, any>>)
    .map(
      (e) =>
        `    ${e['environment'].padEnd(4)} ${e['clientId']}  ${e['redirectUris'].join(' ')}` +
        (e['webOrigins']?.length ? `  web origins: ${e['webOrigins'].join(' ')}` : '') +
        `\n         auth: ${e['tokenEndpointAuthMethod']}${e['jwksUri'] ? ` (keys at ${e['jwksUri']})` : e['jwks'] ? ` (${e['jwks'].keys.length} registered key(s))` : ''}` +
        `  PAR required: ${e['requirePushedAuthorizationRequests'] ? 'yes' : 'no'}  DPoP required: ${e['dpopBoundAccessTokens'] ? 'yes' : 'no'}` +
        `  2nd factor: ${e['requireSecondFactor'] ? 'required' : 'no'}`,
    )
    .join('\n');

/** An app in `apps show`: each environment's OAuth profile, and a warning where it mixes profiles. */
const appProfiles = (a: Record<string, any>) =>
  `${a['appId']}  ${a['appName']} (${a['companyName']})  ${a['status']}  furthest: ${a['environment']}  scopes: ${(a['approvedScopes'] as string[]).join(' ')}\n` +
  (a['environments'] as Array<Record<string, any>>)
    .map(
      (e) =>
        `    ${e['environment'].padEnd(4)} ${e['clientId']}  profile: ${e['profile']}\n` +
        `         auth: ${e['tokenEndpointAuthMethod']}  PAR required: ${e['requirePushedAuthorizationRequests'] ? 'yes' : 'no'}` +
        `  DPoP required: ${e['dpopBoundAccessTokens'] ? 'yes' : 'no'}  DPoP nonce: ${e['dpopNonceRequired'] ? 'yes' : 'no'}` +
        (e['warning'] ? `\n         warning: ${e['warning']}` : ''),
    )
    .join('\n');

const commaList = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function appsCommand(what: string, values: Values, need: Need): Command | undefined {
  const app = () => encodeURIComponent(need('app'));
  switch (what) {
    case 'apps provision':
      return provisionCommand(values, need);
    case 'apps list':
      return {
        method: 'GET',
        path: '/admin/apps',
        body: {},
        print: (r) => (r['apps'] as Array<Record<string, any>>).map(appListing).join('\n') || 'no apps yet',
      };
    case 'apps show':
      return {
        method: 'GET',
        path: '/admin/apps',
        body: {},
        select: (r) => {
          const ref = need('app');
          return (r['apps'] as Array<Record<string, any>>).find(
            (a) => a['appId'] === ref || (a['environments'] as Array<Record<string, any>>).some((e) => e['clientId'] === ref),
          );
        },
        notFound: `no app with id or client id "${need('app')}"`,
        print: appProfiles,
      };
    case 'apps set-profile': {
      const policy = promotionPolicy(values);
      if (!policy['profile']) throw new UsageError('missing --profile (spec or fapi2)');
      return {
        path: `/admin/apps/${app()}/profile`,
        body: { environment: need('env'), policy },
        print: (r) => `"${r['appName']}" in ${r['environment']} (${r['clientId']}) now follows the ${r['profile']} profile`,
      };
    }
    case 'apps promote':
      return promoteCommand(values, app);
    case 'apps rotate-secret':
      return {
        path: `/admin/apps/${app()}/rotate-secret`,
        body: values['env'] ? { environment: values['env'] } : {},
        print: (r) => printCredentials(r, 'rotated the secret of'),
      };
    case 'apps suspend':
      return {
        path: `/admin/apps/${app()}/suspend`,
        body: {},
        print: (r) => `suspended "${r['appName']}" (app ${r['appId']}); ${r['grantsRevoked']} grant(s) revoked`,
      };
    default:
      return undefined;
  }
}

/** `apps provision`: the registration form read from its file, with the scopes approved at once if given. */
function provisionCommand(values: Values, need: Need): Command {
  let registration: unknown;
  const file = need('file');
  try {
    registration = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`cannot read ${file} as JSON: ${(err as Error).message}`);
  }
  const approved = commaList(values['approve-scopes'] as string | undefined);
  return {
    path: '/admin/apps',
    body: { registration, ...(approved.length ? { approvedScopes: approved } : {}) },
    print: (r) => printCredentials(r, 'provisioned'),
  };
}

/** `apps promote`: the next environment's redirect URIs, web origins, consent pages and policy; `app` is the app's reference, encoded. */
function promoteCommand(values: Values, app: () => string): Command {
  const uris = (values['redirect-uri'] as string[] | undefined) ?? [];
  if (!uris.length) throw new UsageError('missing --redirect-uri (each environment has its own redirect URIs)');
  // Each environment has its own web origins too: none given, the new environment's credentials have none.
  const origins = (values['web-origin'] as string[] | undefined) ?? [];
  // Outside DEV the consent page's logo, privacy policy and terms must be https: corrected ones can come with the promotion.
  const pages = Object.fromEntries(
    (['logoUrl', 'privacyPolicyUrl', 'termsOfServiceUrl'] as const).flatMap((key) => {
      const value = values[key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)];
      return typeof value === 'string' ? [[key, value]] : [];
    }),
  );
  const policy = promotionPolicy(values);
  return {
    path: `/admin/apps/${app()}/promote`,
    body: {
      redirectUris: uris,
      ...(origins.length ? { webOrigins: origins } : {}),
      ...(values['to'] ? { to: values['to'] } : {}),
      ...(Object.keys(pages).length ? { pages } : {}),
      ...(Object.keys(policy).length ? { policy } : {}),
    },
    print: (r) => printCredentials(r, 'promoted'),
  };
}
