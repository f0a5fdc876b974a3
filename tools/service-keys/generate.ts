/**
 * Makes one ES256 identity per service and prints it as environment variables: each
 * service's private key (`<SERVICE>_SERVICE_KEY`, to be given to that service alone as its
 * SERVICE_KEY) and the public keys every service trusts (SERVICE_TRUSTED_KEYS, the same for all).
 *
 *   npm run --silent service-keys > ~/.config/trading-api/keys.env   # outside the repository; docker compose --env-file …, or kubectl create secret
 *   npm run service-keys -- --json          # { "keys": { "auth": "<JWK>", … }, "trusted": { "keys": [ … ] } }
 *
 * Rotating a service's key: generate a new one, add its public key to SERVICE_TRUSTED_KEYS
 * everywhere (the old one stays), roll the service onto the new key, then drop the old public key.
 */
import { exportServiceKey, generateServiceKey, SERVICE_NAMES, TrustedServiceKeys } from '@trading/auth';

const keys = SERVICE_NAMES.map((service) => generateServiceKey(service));
const trusted = JSON.stringify(TrustedServiceKeys.of(...keys));
const envName = (service: string) => `${service.toUpperCase().replace(/-/g, '_')}_SERVICE_KEY`;

if (process.argv.includes('--json')) {
  console.log(
    JSON.stringify(
      { keys: Object.fromEntries(keys.map((k) => [k.service, JSON.parse(exportServiceKey(k))])), trusted: JSON.parse(trusted) },
      null,
      2,
    ),
  );
} else {
  console.log(`# Service identities made ${new Date().toISOString()} by npm run service-keys. Secret: keep out of version control.`);
  for (const key of keys) console.log(`${envName(key.service)}='${exportServiceKey(key)}'`);
  console.log(`SERVICE_TRUSTED_KEYS='${trusted}'`);
}
