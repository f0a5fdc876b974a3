import { randomUUID } from 'node:crypto';
import type { DataSource } from '@trading/db';
import { AppError, isUuid } from '@trading/errors';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@trading/webhooks';
import type { KeyEncryption } from '../keys/key-encryption';
import type { Environment } from '../registry/vendor-apps';
import { newSigningSecret, webhookUrlProblem } from './sending';

/** An app may register this many endpoints per environment: enough for a backend and its staging copies. */
const MAX_ENDPOINTS_PER_CLIENT = 10;
/** After a rotation, the old secret keeps signing beside the new one this long, so receivers can switch without losing a message. */
const PREVIOUS_SECRET_GRACE_MS = 24 * 3600 * 1000;

export interface WebhookEndpointView {
  id: string;
  clientId: string;
  environment: Environment;
  url: string;
  eventTypes: WebhookEventType[];
  enabled: boolean;
  description: string | null;
  /** Why the platform turned it off (days of failures), or null. */
  disabledReason: string | null;
  /** Since when every attempt has failed, or null while it answers. */
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface EndpointInput {
  url?: unknown;
  eventTypes?: unknown;
  enabled?: unknown;
  description?: unknown;
}

export interface EndpointRow {
  id: string;
  client_id: string;
  environment: Environment;
  url: string;
  event_types: WebhookEventType[];
  enabled: boolean;
  description: string | null;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_until: Date | null;
  failing_since: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function endpointView(row: EndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    clientId: row.client_id,
    environment: row.environment,
    url: row.url,
    eventTypes: row.event_types,
    enabled: row.enabled,
    description: row.description,
    disabledReason: row.disabled_reason,
    failingSince: iso(row.failing_since),
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}

/** The event types asked for: known ones, each once; absent means every type. */
function parseEventTypes(value: unknown): WebhookEventType[] {
  if (value === undefined || value === null) return [...WEBHOOK_EVENT_TYPES];
  if (!Array.isArray(value) || value.length === 0 || value.length > WEBHOOK_EVENT_TYPES.length * 2)
    throw new AppError('BAD_USER_INPUT', 'eventTypes must be a non-empty list of event types', { field: 'eventTypes' });
  const unknown = value.find((t) => !isWebhookEventType(t));
  if (unknown !== undefined)
    throw new AppError(
      'BAD_USER_INPUT',
      `eventTypes: ${JSON.stringify(unknown).slice(0, 60)} is not an event type (one of ${WEBHOOK_EVENT_TYPES.join(', ')})`,
      { field: 'eventTypes' },
    );
  return [...new Set(value as WebhookEventType[])];
}

function parseDescription(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !/^[^\p{Cc}]{1,200}$/u.test(value))
    throw new AppError('BAD_USER_INPUT', 'description must be 1 to 200 characters without control characters', { field: 'description' });
  return value;
}

function parseEnabled(value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new AppError('BAD_USER_INPUT', 'enabled must be true or false', { field: 'enabled' });
  return value;
}

/**
 * An app's webhook endpoints in one environment (one client id). Secrets are stored encrypted
 * (auth signs with them) and shown once, when made or rotated.
 */
export class WebhookEndpoints {
  constructor(
    private readonly dataSource: DataSource,
    private readonly secrets: KeyEncryption,
  ) {}

  async list(clientId: string): Promise<WebhookEndpointView[]> {
    const rows: EndpointRow[] = await this.dataSource.query(
      `SELECT * FROM webhook_endpoints WHERE client_id = $1 ORDER BY created_at, id`,
      [clientId],
    );
    return rows.map(endpointView);
  }

  async find(clientId: string, id: unknown): Promise<EndpointRow> {
    if (!isUuid(id)) throw new AppError('NOT_FOUND', 'No such webhook endpoint', { field: 'endpointId' });
    const [row]: EndpointRow[] = await this.dataSource.query(`SELECT * FROM webhook_endpoints WHERE id = $1 AND client_id = $2`, [
      id,
      clientId,
    ]);
    if (!row) throw new AppError('NOT_FOUND', 'No such webhook endpoint', { field: 'endpointId' });
    return row;
  }

  async create(
    client: { clientId: string; environment: Environment },
    input: EndpointInput,
  ): Promise<WebhookEndpointView & { secret: string }> {
    const url = await this.parseUrl(input.url, client.environment);
    const eventTypes = parseEventTypes(input.eventTypes);
    const description = parseDescription(input.description);
    const enabled = parseEnabled(input.enabled) ?? true;
    const secret = newSigningSecret();
    return this.dataSource.transaction(async (tx) => {
      // Counted under the client's row lock, so concurrent registrations cannot pass the cap together.
      await tx.query(`SELECT 1 FROM vendor_app_credentials WHERE client_id = $1 FOR UPDATE`, [client.clientId]);
      const [{ n }] = await tx.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE client_id = $1`, [client.clientId]);
      if (n >= MAX_ENDPOINTS_PER_CLIENT)
        throw new AppError('UNPROCESSABLE', `An app may have at most ${MAX_ENDPOINTS_PER_CLIENT} webhook endpoints per environment`, {
          field: 'url',
        });
      const id = randomUUID();
      const [row]: EndpointRow[] = await tx.query(
        `INSERT INTO webhook_endpoints (id, client_id, environment, url, event_types, enabled, description, secret_encrypted)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
        [id, client.clientId, client.environment, url, eventTypes, enabled, description, this.secrets.encrypt(id, secret)],
      );
      return { ...endpointView(row!), secret };
    });
  }

  async update(client: { clientId: string; environment: Environment }, id: unknown, input: EndpointInput): Promise<WebhookEndpointView> {
    const row = await this.find(client.clientId, id);
    const url = input.url === undefined ? row.url : await this.parseUrl(input.url, client.environment);
    const eventTypes = input.eventTypes === undefined ? row.event_types : parseEventTypes(input.eventTypes);
    const description = input.description === undefined ? row.description : parseDescription(input.description);
    const enabled = parseEnabled(input.enabled) ?? row.enabled;
    // Turning an endpoint on again starts its failure clock afresh.
    const [[updated]]: [EndpointRow[]] = await this.dataSource.query(
      `UPDATE webhook_endpoints SET url = $2, event_types = $3, description = $4, enabled = $5, updated_at = now(),
         disabled_reason = CASE WHEN $5 THEN NULL ELSE disabled_reason END,
         failing_since = CASE WHEN $5 AND NOT enabled THEN NULL ELSE failing_since END
       WHERE id = $1 RETURNING *`,
      [row.id, url, eventTypes, description, enabled],
    );
    return endpointView(updated!);
  }

  async remove(clientId: string, id: unknown): Promise<void> {
    const row = await this.find(clientId, id);
    await this.dataSource.query(`DELETE FROM webhook_endpoints WHERE id = $1`, [row.id]);
  }

  /** A new secret; the old one keeps signing beside it for PREVIOUS_SECRET_GRACE_MS. */
  async rotateSecret(clientId: string, id: unknown): Promise<WebhookEndpointView & { secret: string }> {
    const row = await this.find(clientId, id);
    const secret = newSigningSecret();
    const [[updated]]: [EndpointRow[]] = await this.dataSource.query(
      `UPDATE webhook_endpoints SET previous_secret_encrypted = secret_encrypted, secret_encrypted = $2,
         previous_secret_until = now() + make_interval(secs => $3::double precision / 1000), updated_at = now()
       WHERE id = $1 RETURNING *`,
      [row.id, this.secrets.encrypt(row.id, secret), PREVIOUS_SECRET_GRACE_MS],
    );
    return { ...endpointView(updated!), secret };
  }

  /** The secrets a message to this endpoint is signed with now: the current one, and the previous one during its grace. */
  signingSecrets(row: Pick<EndpointRow, 'id' | 'secret_encrypted' | 'previous_secret_encrypted' | 'previous_secret_until'>): string[] {
    const current = this.secrets.decrypt(row.id, row.secret_encrypted);
    const previous =
      row.previous_secret_encrypted && row.previous_secret_until && new Date(row.previous_secret_until).getTime() > Date.now()
        ? [this.secrets.decrypt(row.id, row.previous_secret_encrypted)]
        : [];
    return [current, ...previous];
  }

  private async parseUrl(value: unknown, environment: Environment): Promise<string> {
    if (typeof value !== 'string') throw new AppError('BAD_USER_INPUT', 'url is required: where the webhooks are sent', { field: 'url' });
    const problem = await webhookUrlProblem(value, environment);
    if (problem) throw new AppError('UNPROCESSABLE', problem, { field: 'url' });
    return value;
  }
}
