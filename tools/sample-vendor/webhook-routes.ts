/**
 * Webhooks: the platform POSTs each event about this app's users to `${publicUrl}/webhooks`,
 * signed the Standard Webhooks way. The receiver verifies the raw body with the
 * `standardwebhooks` package before trusting a byte of it (a bad signature or an old timestamp
 * is a 400 and is dropped), drops repeats by `webhook-id` (delivery is at least once) and keeps
 * the latest 50 in memory; GET /webhooks shows a connected visitor those about their own accounts.
 *
 * At start the app registers that URL with its own client credentials (HTTP Basic, no user token):
 * it lists its endpoints first and reuses one with the same URL, rotating its secret, which the API
 * shows only when it makes one. A real app stores the secret instead and registers once.
 */
import express, { type Request, type Response } from 'express';
import createClient from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { paths } from '@trading/api-client';
import { escape, page, utcTime } from './pages';
import type { SampleVendorConfig, VendorClient } from './vendor-client';

/** An event as the page lists it. */
interface ReceivedEvent {
  messageId: string;
  type: string;
  /** When it happened (the envelope's `timestamp`). */
  timestamp: string;
  /** The order's or transaction's id; empty for grant.revoked. */
  subjectId: string;
  /** The account it concerns; empty for grant.revoked. */
  accountId: string;
  /** The order's status or the transaction's state. */
  status: string;
}

type Envelope = {
  id: string;
  type: string;
  timestamp: string;
  data: { order?: Record<string, string>; transaction?: Record<string, string> };
};

const KEPT = 50;

/** The verified events, newest first, and the secret they must be signed with. */
export class WebhookInbox {
  readonly events: ReceivedEvent[] = [];
  private hook: Webhook | undefined;

  /** The `whsec_…` secret the registration answered. */
  trust(secret: string): void {
    this.hook = new Webhook(secret);
  }

  /** Verifies the raw body against its headers; throws when there is no secret yet or the signature does not hold. */
  take(body: Buffer, headers: Record<string, string>): void {
    if (!this.hook) throw new Error('no endpoint registered');
    const event = this.hook.verify(body, headers) as Envelope;
    if (this.events.some((e) => e.messageId === event.id)) return; // a retry of one already kept
    const subject = event.data.order ?? event.data.transaction;
    this.events.unshift({
      messageId: event.id,
      type: event.type,
      // When it happened; when it arrived, should the envelope's time not parse.
      timestamp: Number.isNaN(Date.parse(event.timestamp)) ? new Date().toISOString() : event.timestamp,
      subjectId: subject?.['id'] ?? '',
      accountId: subject?.['accountId'] ?? '',
      status: subject?.['status'] ?? subject?.['state'] ?? '',
    });
    this.events.splice(KEPT);
  }
}

export function webhookRoutes(app: express.Express, vendor: VendorClient, inbox: WebhookInbox): void {
  // The raw bytes: the signature covers the body exactly as sent, before any JSON parsing.
  app.post('/webhooks', express.raw({ type: () => true, limit: '256kb' }), (req, res) => receive(inbox, req, res));
  app.get('/webhooks', (req, res) => webhooksPage(vendor, inbox, req, res));
}

function receive(inbox: WebhookInbox, req: Request, res: Response) {
  const header = (name: string) => req.get(name) ?? '';
  try {
    inbox.take(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0), {
      'webhook-id': header('webhook-id'),
      'webhook-timestamp': header('webhook-timestamp'),
      'webhook-signature': header('webhook-signature'),
    });
  } catch (err) {
    return void res
      .status(400)
      .type('text/plain')
      .send(`not verified: ${(err as Error).message}`);
  }
  res.sendStatus(204); // answered at once: the platform counts a slow answer as a failure
}

/** The events about the visitor's own accounts: another user's orders are none of theirs. */
async function webhooksPage(vendor: VendorClient, inbox: WebhookInbox, req: Request, res: Response) {
  const s = vendor.session(req, res);
  if (!s.tokens) return void res.redirect(303, '/');
  let mine: Set<string>;
  try {
    const accounts = await vendor.api(s, (c) => c.GET('/accounts'));
    mine = new Set(accounts.data?.accounts.map((a) => a.id) ?? []);
  } catch (err) {
    return void res.status(502).send(page('Error', `<section><p id="error">${escape((err as Error).message)}</p></section>`));
  }
  const shown = inbox.events.filter((e) => mine.has(e.accountId));
  const cell = (label: string, value: string) => `<td data-label="${label}">${escape(value)}</td>`;
  const rows = shown
    .map(
      (e) =>
        `<tr data-message="${escape(e.messageId)}">${cell('Time', utcTime(new Date(e.timestamp)))}${cell('Type', e.type)}${cell('Order / transaction', e.subjectId)}${cell('Status', e.status)}</tr>`,
    )
    .join('');
  res.send(
    page(
      'Webhooks',
      `<section><h2>Webhooks</h2><p><a href="/accounts">Back to the dashboard</a> · <a href="/webhooks">Refresh</a></p>` +
        (shown.length
          ? `<div class="table-scroll"><table id="webhooks" class="cards"><thead><tr><th>Time</th><th>Type</th><th>Order / transaction</th><th>Status</th></tr></thead><tbody>${rows}</tbody></table></div>`
          : `<p id="no-webhooks" class="muted">No verified events about your accounts yet.</p>`) +
        `<p class="muted">The latest ${KEPT} events this app received and verified, newest first.</p></section>`,
    ),
  );
}

/**
 * Registers `${publicUrl}/webhooks` for this app (or takes over its endpoint with that URL, with a
 * fresh secret), and trusts the secret. Never fatal: the dashboard works without webhooks.
 */
export async function registerWebhookEndpoint(config: SampleVendorConfig, inbox: WebhookInbox, log = console.log): Promise<void> {
  if (!config.webhooks || !config.publicUrl) return;
  if (!config.clientSecret) return log('Webhooks: not registered (this sample registers with the plain profile’s client secret)');
  const url = `${config.publicUrl}/webhooks`;
  const basic = Buffer.from(`${encodeURIComponent(config.clientId)}:${encodeURIComponent(config.clientSecret)}`).toString('base64');
  const api = createClient<paths>({ baseUrl: config.apiUrl, headers: { authorization: `Basic ${basic}` } });
  try {
    const listed = await api.GET('/webhooks/endpoints');
    if (!listed.data) throw new Error(`listing answered ${listed.response.status} ${JSON.stringify(listed.error)}`);
    const existing = listed.data.endpoints.find((e) => e.url === url);
    const answer = existing
      ? await api.POST('/webhooks/endpoints/{endpointId}/rotate-secret', { params: { path: { endpointId: existing.id } }, body: {} })
      : await api.POST('/webhooks/endpoints', { body: { url, description: 'sample vendor app' } });
    if (!answer.data)
      throw new Error(`${existing ? 'rotating' : 'registering'} answered ${answer.response.status} ${JSON.stringify(answer.error)}`);
    inbox.trust(answer.data.secret);
    log(
      existing
        ? `Webhooks: endpoint ${existing.id} already registered for ${url}; rotated its secret to learn one${existing.enabled ? '' : ' (it is turned off: PATCH it with "enabled": true)'}`
        : `Webhooks: registered ${url} (endpoint ${answer.data.id}, every event type)`,
    );
  } catch (err) {
    log(`Webhooks: not registered: ${(err as Error).message}`);
  }
}
