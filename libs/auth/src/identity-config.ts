import { z } from '@trading/config';
import { parseServiceKey, TrustedServiceKeys, type ServiceKey, type ServiceName } from './service-identity';

const isServiceKey = (v: unknown): v is ServiceKey => typeof v === 'object' && v !== null && 'privateKey' in v && 'kid' in v;

/**
 * A service's identity in its config: SERVICE_KEY (its private JWK) and SERVICE_TRUSTED_KEYS
 * (the peers' public JWKS). Both are parsed at start, so a bad key stops start-up with a
 * message that names the variable and never echoes the key. The launcher may pass objects.
 */
export function serviceIdentityFields(service: ServiceName) {
  return {
    SERVICE_KEY: z.union([
      z.custom<ServiceKey>(isServiceKey),
      z.string({ message: `is required: ${service}'s private key (npm run service-keys)` }).transform((json, ctx) => {
        try {
          return parseServiceKey(service, json);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
          return z.NEVER;
        }
      }),
    ]),
    SERVICE_TRUSTED_KEYS: z.union([
      z.instanceof(TrustedServiceKeys),
      z.string({ message: 'is required: the public keys of the services it trusts (npm run service-keys)' }).transform((json, ctx) => {
        try {
          return TrustedServiceKeys.parse(json);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
          return z.NEVER;
        }
      }),
    ]),
  };
}
