import type { DataSource } from 'typeorm';
import { queryPrepared, type NotifiedCache, type PreparedStatement } from '@trading/db';
import { APP_COLUMNS, POLICY_COLUMNS, type Environment } from './vendor-apps';

/** A client with its app, whatever its environment and status (the caller decides: the row is remembered by client id). */
const CLIENT_ROW: PreparedStatement = {
  name: 'client-with-secret',
  text: `SELECT ${APP_COLUMNS}, a.subject_secret, c.client_id, c.redirect_uris, c.environment AS client_environment, c.secret_hash,
                ${POLICY_COLUMNS}
           FROM vendor_app_credentials c JOIN vendor_apps a ON a.id = c.app_id
          WHERE c.client_id = $1`,
};

/** A client's row as read for token requests, kept by client id (null: no such client). */
export type ClientRow = Record<string, any> | null;

/** Clients read for token requests, by client id, dropped when a trigger announces a change to them or their app. */
export type RememberedClients = Pick<NotifiedCache<ClientRow>, 'get' | 'forgetAll'>;

/** The row of a client of `environment` whose app is active (or suspended, if asked for); null for any other id. */
export async function clientRow(
  dataSource: DataSource,
  rememberedClients: RememberedClients | undefined,
  clientId: unknown,
  environment: Environment,
  options: { includeSuspended?: boolean },
): Promise<Record<string, any> | null> {
  if (typeof clientId !== 'string' || clientId.length > 100) return null;
  // Read on every token request: from memory while PostgreSQL's announcements of changes are
  // heard (rememberedClients), else a prepared statement (planned once per connection).
  // Frozen: a remembered row is shared by every request that reads it, so none may change it for the others.
  const load = async (): Promise<ClientRow> =>
    deepFreeze((await queryPrepared<Record<string, any>>(dataSource, CLIENT_ROW, [clientId]))[0] ?? null);
  const row = rememberedClients ? await rememberedClients.get(clientId, load) : await load();
  if (!row || row['client_environment'] !== environment) return null;
  return row['status'] === 'ACTIVE' || options.includeSuspended ? row : null;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !ArrayBuffer.isView(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
