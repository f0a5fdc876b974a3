import { z } from '@trading/config';
import { parseServiceKey, TrustedServiceKeys, type ServiceKey, type ServiceName } from './service-identity';

const isServiceKey = (v: unknown): v is ServiceKey => typeof v === 'object' && v !== null && 'privateKey' in v && 'kid' in v;

/** A JSON setting parsed once at start; the launcher may hand over the parsed object itself. */
function parsed<T>(isParsed: (v: unknown) => v is T, parse: (json: string) => T, missing: string) {
  return z.unknown().transform((value, ctx): T => {
    if (isParsed(value)) return value;
    if (typeof value !== 'string' || !value) {
      ctx.addIssue({ code: 'custom', message: missing });
      return z.NEVER;
    }
    try {
      return parse(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });
}

/**
 * A service's identity in its config: SERVICE_KEY (its private JWK) and SERVICE_TRUSTED_KEYS
 * (the peers' public JWKS). Both are parsed at start, so a bad key stops start-up with a
 * message that names the variable and never echoes the key.
 */
export function serviceIdentityFields(service: ServiceName) {
  return {
    SERVICE_KEY: parsed(
      isServiceKey,
      (json) => parseServiceKey(service, json),
      `is required: ${service}'s private key (npm run service-keys)`,
    ),
    SERVICE_TRUSTED_KEYS: parsed(
      (v): v is TrustedServiceKeys => v instanceof TrustedServiceKeys,
      (json) => TrustedServiceKeys.parse(json),
      'is required: the public keys of the services it trusts (npm run service-keys)',
    ),
  };
}
