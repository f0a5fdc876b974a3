import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema';

export type { components, operations, paths };
/** The API's resources by name (`Schemas['Order']`, `Schemas['FundingTransaction']`, …). */
export type Schemas = components['schemas'];
/** An error answer (application/problem+json, RFC 9457): a stable `code`, the `field` at fault, the `requestId`. */
export type Problem = Schemas['Problem'];
export type TradingApiClient = Client<paths>;

/** A token, or a function asked before every request (it may refresh and return a new one). */
export type AccessTokenSource = string | (() => string | undefined | Promise<string | undefined>);

export interface TradingApiClientOptions {
  /** `{base_url}`, e.g. http://localhost:8080/v1 */
  baseUrl: string;
  /** An OAuth access token or a PAT session, or a function asked before every request (tokens rotate). */
  token?: AccessTokenSource;
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

export interface TradingClientOptions {
  /** `{base_url}`, e.g. https://api.example-broker.com/v1 */
  baseUrl: string;
  /** A fixed bearer token: a PAT session (from `POST /pat/login`) or an OAuth access token. */
  accessToken?: string;
  /**
   * Asked before every request for the bearer token to send; return a fresh one after refreshing
   * (OAuth access tokens live an hour, PAT sessions 15 minutes). Wins over `accessToken`.
   */
  getAccessToken?: () => string | undefined | Promise<string | undefined>;
}

/**
 * The client a vendor app or a script starts with: every request carries
 * `Authorization: Bearer <token>`, the token read per request from `getAccessToken` (or the fixed
 * `accessToken`). Without either, requests go unauthenticated (`POST /pat/login`).
 *
 *   const api = createTradingClient({ baseUrl, getAccessToken: () => tokens.current() });
 *   const { data, error } = await api.GET('/accounts');
 */
export function createTradingClient(options: TradingClientOptions): TradingApiClient {
  return createTradingApiClient({ baseUrl: options.baseUrl, token: options.getAccessToken ?? options.accessToken });
}

/** A new random `Idempotency-Key` (a UUID). Make one per intended operation and send the same one on each retry of it. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * The header of a money-moving request (`POST /oms/order`, deposits, withdrawals…):
 *   params: { header: idempotencyHeader(key) }
 * The same key and body answer the first result again; the same key with another body is refused (422).
 */
export function idempotencyHeader(key: string = newIdempotencyKey()): { 'Idempotency-Key': string } {
  return { 'Idempotency-Key': key };
}
