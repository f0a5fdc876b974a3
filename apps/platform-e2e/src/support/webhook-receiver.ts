import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request as the receiver got it, and whether the standardwebhooks package accepted its signature. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** What `Webhook.verify` returned (the parsed body) when the signature checked out; null when it threw. */
  verified: Record<string, any> | null;
  at: number;
}

/**
 * A vendor's webhook endpoint: a real HTTP server on 127.0.0.1 that verifies each request with
 * the `standardwebhooks` package, as a receiver would, and answers `status` (200 unless changed).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  status = 200;
  /** Called as each request arrives, before it is answered (a test acting at an exact moment). */
  onReceive: (() => void) | undefined;
  /** Milliseconds to wait before answering (a slow receiver). */
  delayMs = 0;
  private secrets: string[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiver.take(req.headers, Buffer.concat(chunks).toString('utf8'));
        receiver.onReceive?.();
        setTimeout(
          () => res.writeHead(receiver.status, { 'content-type': 'text/plain' }).end(`answered ${receiver.status}`),
          receiver.delayMs,
        );
      });
    });
    const receiver: WebhookReceiver = new WebhookReceiver(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** The signing secrets the receiver accepts (the one shown at registration; a rotation adds the new one). */
  trust(secret: string): void {
    this.secrets.push(secret);
  }

  /** Verified messages, by `webhook-id`, first arrival only. */
  messages(): Array<Record<string, any>> {
    const seen = new Set<string>();
    return this.received.filter((r) => r.verified && !seen.has(r.id) && seen.add(r.id)).map((r) => r.verified!);
  }

  async until(done: (r: WebhookReceiver) => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!done(this)) {
      if (Date.now() > end)
        throw new Error(`timed out waiting for ${what}; received ${JSON.stringify(this.received.map((r) => r.verified?.['type'] ?? '?'))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private take(headers: IncomingHttpHeaders, body: string): void {
    const one = (name: string) => String(headers[name] ?? '');
    const wire = {
      'webhook-id': one('webhook-id'),
      'webhook-timestamp': one('webhook-timestamp'),
      'webhook-signature': one('webhook-signature'),
    };
    let verified: Record<string, any> | null = null;
    for (const secret of this.secrets) {
      try {
        verified = new Webhook(secret).verify(body, wire) as Record<string, any>;
        break;
      } catch {
        /* not this secret */
      }
    }
    this.received.push({
      id: wire['webhook-id'],
      timestamp: wire['webhook-timestamp'],
      signature: wire['webhook-signature'],
      body,
      verified,
      at: Date.now(),
    });
  }
}
