import { z } from '@trading/config';
import { contract } from '../contract';

/** The document's shared components: the rate limit headers the answers carry, and the contract's schemas. */

/** Every authenticated answer carries the tightest budget it used. */
export const RATE_LIMIT_HEADERS = Object.fromEntries(
  [
    'RateLimit-Limit',
    'RateLimit-Remaining',
    'RateLimit-Reset',
    'RateLimit-Policy',
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
    'X-RateLimit-Budget',
  ].map((h) => [h, { $ref: `#/components/headers/${h}` }]),
);

const header = (description: string, schema: Record<string, unknown> = { type: 'integer', minimum: 0 }) => ({ description, schema });

export const headers = {
  'RateLimit-Limit': header('Requests allowed in the window of the tightest budget this request used'),
  'RateLimit-Remaining': header('Requests left in that window'),
  'RateLimit-Reset': header('Seconds until that window ends'),
  'RateLimit-Policy': header('The budget by name, its quota and window in seconds, e.g. `"token";q=300;w=60`', { type: 'string' }),
  'X-RateLimit-Limit': header('As RateLimit-Limit'),
  'X-RateLimit-Remaining': header('As RateLimit-Remaining'),
  'X-RateLimit-Reset': header('When that window ends, as a Unix time in seconds'),
  'X-RateLimit-Budget': header('Which budget this is: token, app, user, orders, user-orders or address', {
    type: 'string',
    enum: ['token', 'app', 'user', 'orders', 'user-orders', 'address'],
  }),
  'Retry-After': header('Seconds to wait before trying again'),
};

/** The contract's named schemas as OpenAPI components (JSON Schema 2020-12, which OpenAPI 3.1 uses). */
export function componentSchemas(): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(contract, { target: 'draft-2020-12', uri: (id) => `#/components/schemas/${id}` }) as {
    schemas: Record<string, Record<string, unknown>>;
  };
  return Object.fromEntries(Object.entries(schemas).map(([name, { $schema: _s, $id: _i, ...schema }]) => [name, schema]));
}
