import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema';

export type { components, operations, paths };
/** The API's resources by name (`Schemas['Order']`, `Schemas['FundingTransaction']`, …). */
export type Schemas = components['schemas'];
export type TradingApiClient = Client<paths>;

export interface TradingApiClientOptions {
  /** `{base_url}`, e.g. http://localhost:8080/v1 */
  baseUrl: string;
  /** An OAuth access token or a PAT session, or a function asked before every request (tokens rotate). */
  token?: string | (() => string | undefined | Promise<string | undefined>);
}

/**
 * A typed client of the Trading API: paths, parameters, bodies and answers come from the
 * OpenAPI document (libs/api-client/openapi.json, generated from the facade's contract), so a
 * call that does not match the API does not compile.
 *
 *   const api = createTradingApiClient({ baseUrl: 'http://localhost:8080/v1', token });
 *   const { data, error } = await api.GET('/accounts/{accountId}/positions', { params: { path: { accountId } } });
 */
export function createTradingApiClient(options: TradingApiClientOptions): TradingApiClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, '') });
  client.use({
    async onRequest({ request }) {
      const token = typeof options.token === 'function' ? await options.token() : options.token;
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  });
  return client;
}
