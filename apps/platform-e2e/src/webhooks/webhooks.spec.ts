import { createServer, type AddressInfo, type Server } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { WebhookDispatcher } from '@trading/auth-service';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { asyncApiMessageValidator } from '@trading/rest-facade-service';
import { adminCli } from '../support/admin-cli';
import { admin, extraAuth, provisionApp, tokensFor, type ProvisionedApp } from '../support/oauth-helpers';
import { startOrdersPlatform, until } from '../support/orders-platform';
import type { TestPlatform } from '../support/test-platform';
import { WebhookReceiver } from '../support/webhook-receiver';

const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[1]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;
const bobCash = DEMO_ACCOUNTS[2]!.id;
const SCOPES = ['read:accounts', 'read:orders', 'write:orders', 'read:banking', 'write:banking'];

/** HTTP Basic with the app's own credentials, as at the token endpoint. */
const basic = (app: Pick<ProvisionedApp, 'clientId' | 'clientSecret'>) =>
  `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.clientSecret)}`).toString('base64')}`;

/**
 * Vendors' webhooks end to end: an app registers an endpoint (a real HTTP server here) through
 * the API, users' orders and transfers happen, and each event arrives signed per Standard
 * Webhooks, verified with the `standardwebhooks` package as a receiver would.
 */
describe('webhooks', () => {
  let p: TestPlatform;
  let appA: ProvisionedApp;
  let appB: ProvisionedApp;
  let aliceToken: string;
  let bobToken: string;
  let receiverA: WebhookReceiver;
  let receiverB: WebhookReceiver;
  let endpointA: string;
  let secretA: string;
  let replacement: WebhookDispatcher | undefined;
  const api = (method: string, path: string, app: Pick<ProvisionedApp, 'clientId' | 'clientSecret'>, body?: unknown) =>
    http(method, `${p.urls.api}${path}`, { body, headers: { authorization: basic(app) } });

  const register = async (app: ProvisionedApp, receiver: WebhookReceiver, more: Record<string, unknown> = {}) => {
    const res = await api('POST', '/webhooks/endpoints', app, { url: receiver.url, ...more });
    if (res.status !== 201) throw new Error(`registration answered ${res.status}: ${JSON.stringify(res.body)}`);
    receiver.trust(res.body.secret);
    return res.body as { id: string; secret: string };
  };
  const order = (token: string, body: Record<string, unknown>) =>
    http('POST', `${p.urls.api}/oms/order`, {
      token,
      body: {
        accountId: aliceCash,
        symbol: 'AAPL',
        side: 'BUY',
        type: 'LIMIT',
        timeInForce: 'GTC',
        quantity: '1',
        limitPrice: '100.00',
        ...body,
      },
    });
  const transfer = (token: string, kind: 'deposit' | 'withdraw', accountId: string, amount: string, sandboxOutcome: string) =>
    http('POST', `${p.urls.api}/banking/${kind}`, {
      token,
      body: { accountId, amount, currency: accountId === bobCash ? 'EUR' : 'USD', sandboxOutcome },
    });
  const of = (receiver: WebhookReceiver, type: string, id: string) =>
    receiver.messages().filter((m) => m['type'] === type && (m['data']['order']?.['id'] ?? m['data']['transaction']?.['id']) === id);

  beforeAll(async () => {
    p = await startOrdersPlatform(
      {},
      {},
      {
        auth: {
          WEBHOOK_DISPATCH_POLL_MS: 100,
          WEBHOOK_LEASE_MS: 2000,
          WEBHOOK_RETRY_SCHEDULE_SECONDS: [1, 2, 60],
          // Attempts at 0, 1 and 3 s: the third finds the endpoint failing for longer than 2 s and turns it off.
          WEBHOOK_DISABLE_AFTER_SECONDS: 2,
          WEBHOOK_TIMEOUT_MS: 2000,
        },
      },
    );
    await p.oms.feed.setPrice('AAPL', '190.00');
    appA = await provisionApp(p, { scopes: SCOPES }, SCOPES);
    appB = await provisionApp(p, { scopes: SCOPES, appName: 'Another Vendor App' }, SCOPES);
    aliceToken = (await tokensFor(p, appA, alice, SCOPES.join(' '))).access_token;
    bobToken = (await tokensFor(p, appB, bob, SCOPES.join(' '))).access_token;
    receiverA = await WebhookReceiver.start();
    receiverB = await WebhookReceiver.start();
    ({ id: endpointA, secret: secretA } = await register(appA, receiverA));
    await register(appB, receiverB);
  }, 120_000);
  afterAll(async () => {
    await replacement?.stop();
    await receiverA?.close();
    await receiverB?.close();
    await p?.stop();
  });

  it('registration: the app authenticates with its own credentials; a bad URL or event type is refused naming the field; the secret is shown once', async () => {
    expect((await http('GET', `${p.urls.api}/webhooks/endpoints`)).status).toBe(401);
    // The catalogue needs no credentials: every event type with the scope a user's grant must hold.
    const types = await http('GET', `${p.urls.api}/webhooks/event-types`);
    expect(types.status).toBe(200);
    expect(types.body.eventTypes).toHaveLength(12);
    expect(types.body.eventTypes).toContainEqual(expect.objectContaining({ type: 'order.filled', scope: 'read:orders' }));
    expect(types.body.eventTypes).toContainEqual(expect.objectContaining({ type: 'grant.revoked', scope: null }));
    const wrong = await api('GET', '/webhooks/endpoints', { clientId: appA.clientId, clientSecret: 'not-the-secret' });
    expect({ status: wrong.status, code: wrong.body.code }).toEqual({ status: 401, code: 'UNAUTHENTICATED' });
    // DEV takes http only to the vendor's own machine.
    const remote = await api('POST', '/webhooks/endpoints', appA, { url: 'http://vendor.example/hooks' });
    expect({ status: remote.status, code: remote.body.code, field: remote.body.field }).toEqual({
      status: 422,
      code: 'UNPROCESSABLE',
      field: 'url',
    });
    const badType = await api('POST', '/webhooks/endpoints', appA, { url: receiverA.url, eventTypes: ['order.exploded'] });
    expect({ status: badType.status, field: badType.body.field }).toEqual({ status: 400, field: 'eventTypes' });
    const listed = await api('GET', '/webhooks/endpoints', appA);
    expect(listed.status).toBe(200);
    expect(listed.body.endpoints.map((e: { id: string }) => e.id)).toEqual([endpointA]);
    expect(JSON.stringify(listed.body)).not.toMatch(/whsec_/);
    // Another app cannot see, change or remove this one's endpoint.
    expect((await api('PATCH', `/webhooks/endpoints/${endpointA}`, appB, { enabled: false })).status).toBe(404);
  });

  it("the service team: the admin CLI lists, adds (secret shown once), turns off and removes an app's endpoints; a bad URL is refused naming it", async () => {
    const cli = (...args: string[]) => adminCli(p, ['apps', 'webhooks', ...args, '--app', appB.clientId, '--env', 'DEV']);
    const added = await cli('add', '--url', 'http://localhost:9/cli-hooks', '--events', 'order.filled,grant.revoked');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/signing secret {2}whsec_/);
    const id = /registered (\S+)/.exec(added.stdout)![1]!;
    const listed = await cli('list');
    expect(listed.stdout).toContain('http://localhost:9/cli-hooks');
    expect(listed.stdout).toContain('events: order.filled grant.revoked');
    expect(listed.stdout).not.toMatch(/whsec_/);
    expect((await cli('update', '--endpoint', id, '--disable')).stdout).toMatch(new RegExp(`updated ${id}  off`));
    const refused = await cli('add', '--url', 'http://vendor.example/hooks');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('url');
    expect((await cli('remove', '--endpoint', id)).stdout).toContain(`removed ${id}`);
    expect((await cli('list')).stdout).not.toContain('cli-hooks');
  });

  it('orders and transfers arrive once each, verified by standardwebhooks, in the order they happened, shaped as the AsyncAPI document says', async () => {
    const asyncapi = await http('GET', `${p.urls.api}/asyncapi.json`);
    const problemsOf = await asyncApiMessageValidator(asyncapi.body);
    const filled = await order(aliceToken, { type: 'MARKET', timeInForce: 'DAY', limitPrice: undefined });
    expect(filled.status).toBe(201);
    const cancelled = await order(aliceToken, {});
    expect(cancelled.status).toBe(201);
    await until(
      () => http('GET', `${p.urls.api}/oms/${aliceCash}/order/${cancelled.body.id}`, { token: aliceToken }),
      (r) => r.body.status === 'NEW',
      'the order to work',
    );
    expect((await http('DELETE', `${p.urls.api}/oms/order?orderId=${cancelled.body.id}`, { token: aliceToken })).status).toBe(200);
    const settled = await transfer(aliceToken, 'deposit', aliceCash, '25.00', 'COMPLETED');
    const failed = await transfer(aliceToken, 'deposit', aliceCash, '26.00', 'REJECTED');
    const withdrawn = await transfer(aliceToken, 'withdraw', aliceCash, '5.00', 'COMPLETED');
    for (const t of [settled, failed, withdrawn]) expect(t.status).toBe(201);

    await receiverA.until(
      (r) =>
        of(r, 'order.filled', filled.body.id).length === 1 &&
        of(r, 'order.cancelled', cancelled.body.id).length === 1 &&
        of(r, 'funding.deposit.settled', settled.body.id).length === 1 &&
        of(r, 'funding.deposit.failed', failed.body.id).length === 1 &&
        of(r, 'funding.withdrawal.settled', withdrawn.body.id).length === 1,
      'every event',
    );
    await new Promise((r) => setTimeout(r, 500));
    // Once each: one message per change, and no message id twice.
    for (const [type, id] of [
      ['order.accepted', filled.body.id],
      ['order.filled', filled.body.id],
      ['order.accepted', cancelled.body.id],
      ['order.cancelled', cancelled.body.id],
    ])
      expect({ type, n: of(receiverA, type, id).length }).toEqual({ type, n: 1 });
    expect(receiverA.received.every((r) => r.verified)).toBe(true);
    expect(new Set(receiverA.received.map((r) => r.id)).size).toBe(receiverA.received.length);
    // One order's events in the order its changes happened.
    const forFilled = receiverA
      .messages()
      .filter((m) => m['data']['order']?.['id'] === filled.body.id)
      .map((m) => m['type']);
    expect(forFilled).toEqual(['order.accepted', 'order.filled']);
    // The payload is the view the REST API returns, with the event's type, id and time.
    const rest = await http('GET', `${p.urls.api}/oms/${aliceCash}/order/${filled.body.id}`, { token: aliceToken });
    const message = of(receiverA, 'order.filled', filled.body.id)[0]!;
    const { fills: _fills, legs: _legs, ...withoutFills } = rest.body;
    expect(message['data']['order']).toEqual(withoutFills);
    expect(message['id']).toBe(receiverA.received.find((r) => r.verified === message)?.id);
    expect(of(receiverA, 'funding.deposit.settled', settled.body.id)[0]!['data']['transaction']).toMatchObject({
      id: settled.body.id,
      state: 'COMPLETED',
      amount: '25.00',
    });
    for (const m of receiverA.messages())
      expect({ type: m['type'], problems: problemsOf(m['type'], m) }).toEqual({ type: m['type'], problems: [] });
  });

  it('every order outcome the sandbox plays arrives: partly filled, filled, rejected, expired, replaced; a withdrawal failed', async () => {
    const sandbox = (path: string, body: Record<string, unknown> = {}) =>
      http('POST', `${p.urls.api}/sandbox${path}`, { token: aliceToken, body });
    const working = async (body: Record<string, unknown> = {}) => {
      const placed = await order(aliceToken, body);
      expect(placed.status).toBe(201);
      await until(
        () => http('GET', `${p.urls.api}/oms/${aliceCash}/order/${placed.body.id}`, { token: aliceToken }),
        (r) => r.body.status === 'NEW',
        'the order to work',
      );
      return placed.body.id as string;
    };
    const partly = await working({ quantity: '3' });
    expect((await sandbox(`/orders/${partly}/fill`, { quantity: '1', price: '99.50' })).status).toBe(200);
    expect((await sandbox(`/orders/${partly}/fill`)).status).toBe(200);
    const rejected = await working();
    expect((await sandbox(`/orders/${rejected}/reject`, { reason: 'Exchange refused the order (sandbox)' })).status).toBe(200);
    const expired = await working();
    expect((await sandbox(`/orders/${expired}/expire`)).status).toBe(200);
    const replaced = await working();
    const replacement = await http('PUT', `${p.urls.api}/oms/order`, {
      token: aliceToken,
      body: { accountId: aliceCash, orderId: replaced, quantity: '2' },
    });
    expect(replacement.status).toBe(200);
    const withdrawal = await transfer(aliceToken, 'withdraw', aliceCash, '7.00', 'COMPLETED');
    expect((await sandbox(`/funding/${withdrawal.body.id}/fail`, { reason: 'Beneficiary bank refused it (sandbox)' })).status).toBe(200);

    await receiverA.until(
      (r) =>
        of(r, 'order.filled', partly).length === 1 &&
        of(r, 'order.rejected', rejected).length === 1 &&
        of(r, 'order.expired', expired).length === 1 &&
        of(r, 'order.replaced', replaced).length === 1 &&
        of(r, 'order.accepted', replacement.body.id).length === 1 &&
        of(r, 'funding.withdrawal.failed', withdrawal.body.id).length === 1,
      'every sandbox outcome',
    );
    const forPartly = receiverA.messages().filter((m) => m['data']['order']?.['id'] === partly);
    expect(forPartly.map((m) => [m['type'], m['data']['order']['filledQuantity']])).toEqual([
      ['order.accepted', '0'],
      ['order.partially_filled', '1'],
      ['order.filled', '3'],
    ]);
    expect(of(receiverA, 'order.rejected', rejected)[0]!['data']['order']['statusReason']).toContain('Exchange refused the order');
    expect(of(receiverA, 'order.replaced', replaced)[0]!['data']['order']['replacedBy']).toBe(replacement.body.id);
    expect(of(receiverA, 'funding.withdrawal.failed', withdrawal.body.id)[0]!['data']['transaction']).toMatchObject({ state: 'REJECTED' });
    // Every message so far, of every type, is what the AsyncAPI document's schema for its type says.
    const problemsOf = await asyncApiMessageValidator((await http('GET', `${p.urls.api}/asyncapi.json`)).body);
    const types = new Set(receiverA.messages().map((m) => m['type']));
    expect(types.size).toBeGreaterThanOrEqual(7);
    for (const m of receiverA.messages())
      expect({ type: m['type'], problems: problemsOf(m['type'], m) }).toEqual({ type: m['type'], problems: [] });
  });

  it("another app's user never appears: each app hears only of the users who connected it", async () => {
    const bobsDeposit = await transfer(bobToken, 'deposit', bobCash, '30.00', 'COMPLETED');
    expect(bobsDeposit.status).toBe(201);
    await receiverB.until((r) => of(r, 'funding.deposit.settled', bobsDeposit.body.id).length === 1, "bob's deposit");
    const accountsIn = (r: WebhookReceiver) =>
      new Set(r.messages().map((m) => m['data']['order']?.['accountId'] ?? m['data']['transaction']?.['accountId']));
    expect([...accountsIn(receiverB)]).toEqual([bobCash]);
    expect(accountsIn(receiverA).has(bobCash)).toBe(false);
  });

  it('an endpoint answering 500 is retried with backoff, then turned off and the vendor mailed; a good endpoint meanwhile is not delayed; redelivery sends it again', async () => {
    const failing = await WebhookReceiver.start();
    failing.status = 500;
    try {
      const { id: failingId } = await register(appA, failing, { eventTypes: ['funding.deposit.settled'] });
      const deposit = await transfer(aliceToken, 'deposit', aliceCash, '11.00', 'COMPLETED');
      await receiverA.until((r) => of(r, 'funding.deposit.settled', deposit.body.id).length === 1, 'the deposit at the good endpoint');
      await failing.until((r) => r.received.length >= 3, 'three attempts at the failing endpoint', 15_000);
      const [first, second, third] = failing.received;
      // The same message every time, signed afresh; the waits grow (1 s, then 2 s).
      expect(new Set(failing.received.map((r) => r.id)).size).toBe(1);
      expect(second!.at - first!.at).toBeGreaterThanOrEqual(900);
      expect(third!.at - second!.at).toBeGreaterThanOrEqual(1900);
      // The good endpoint had it before the failing one's first retry.
      const good = receiverA.received.find((r) => r.verified?.['data']?.['transaction']?.['id'] === deposit.body.id)!;
      expect(good.at).toBeLessThan(second!.at);
      const log = await api('GET', `/webhooks/deliveries?endpointId=${failingId}`, appA);
      expect(log.status).toBe(200);
      const [delivery] = log.body.deliveries;
      expect(delivery).toMatchObject({
        endpointId: failingId,
        eventType: 'funding.deposit.settled',
        lastStatusCode: 500,
        messageId: first!.id,
      });
      expect(delivery.attemptLog[0]).toMatchObject({ statusCode: 500, responseSnippet: 'answered 500', error: null });
      expect(delivery.attemptLog[0].durationMs).toBeGreaterThanOrEqual(0);
      // Failing for longer than the limit (2 s here) turns the endpoint off and tells the vendor.
      await until(
        () => api('GET', '/webhooks/endpoints', appA),
        (r) => r.body.endpoints.some((e: any) => e.id === failingId && !e.enabled),
        'the endpoint turned off',
      );
      const mails = await p.auth.dataSource.query(
        `SELECT to_address, subject, body FROM email_outbox WHERE subject LIKE '%webhook endpoint was turned off%'`,
      );
      expect(mails).toHaveLength(1);
      expect(mails[0].body).toContain(failing.url);
      // Back up: turned on again and the delivery replayed by hand, with the same message id.
      failing.status = 200;
      expect((await api('POST', `/webhooks/deliveries/${delivery.id}/redeliver`, appA)).status).toBe(409);
      const on = await api('PATCH', `/webhooks/endpoints/${failingId}`, appA, { enabled: true });
      expect(on.body).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
      const again = await api('POST', `/webhooks/deliveries/${delivery.id}/redeliver`, appA);
      expect(again.status).toBe(202);
      await failing.until((r) => r.received.some((x) => x.verified && x.id === first!.id && x.at > third!.at), 'the redelivery');
      const after = await api('GET', `/webhooks/deliveries?endpointId=${failingId}&status=DELIVERED`, appA);
      expect(after.body.deliveries.map((d: any) => d.id)).toEqual([delivery.id]);
    } finally {
      await failing.close();
    }
  });

  it('a rotated secret: the old one keeps signing beside the new one, so a receiver holding either verifies', async () => {
    const rotated = await api('POST', `/webhooks/endpoints/${endpointA}/rotate-secret`, appA);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(secretA);
    const deposit = await transfer(aliceToken, 'deposit', aliceCash, '12.00', 'COMPLETED');
    await receiverA.until((r) => of(r, 'funding.deposit.settled', deposit.body.id).length === 1, 'a deposit after the rotation');
    const raw = receiverA.received.find((r) => r.verified?.['data']?.['transaction']?.['id'] === deposit.body.id)!;
    expect(raw.signature.split(' ')).toHaveLength(2);
    const headers = { 'webhook-id': raw.id, 'webhook-timestamp': raw.timestamp, 'webhook-signature': raw.signature };
    for (const secret of [secretA, rotated.body.secret])
      expect(new Webhook(secret).verify(raw.body, headers)).toMatchObject({ type: 'funding.deposit.settled' });
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(raw.body, headers)).toThrow();
    receiverA.trust(rotated.body.secret);
  });

  it('a sender killed mid-burst: every event is still delivered, and what came twice carries the same webhook-id', async () => {
    const before = receiverA.received.length;
    receiverA.delayMs = 100;
    // The sender dies while the receiver is handling the third message of the burst: its answer is never recorded.
    receiverA.onReceive = () => {
      if (receiverA.received.length - before === 3) p.auth.webhooks.abort();
    };
    const placed: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await order(aliceToken, { limitPrice: `${90 + i}.00` });
      expect(res.status).toBe(201);
      placed.push(res.body.id);
    }
    await receiverA.until((r) => r.received.length - before >= 3, 'the burst to start');
    receiverA.onReceive = undefined;
    // Another instance takes over once the dead one's lease (2 s here) has run out.
    replacement = p.auth.newWebhookDispatcher(100);
    replacement.start();
    await receiverA.until((r) => placed.every((id) => of(r, 'order.accepted', id).length === 1), 'every order of the burst', 30_000);
    const burst = receiverA.received.slice(before);
    const ids = burst.map((r) => r.id);
    expect(new Set(ids).size).toBe(placed.length);
    // At least once: the message in flight when the sender died came again, with the same id and body.
    const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
    expect(twice.length).toBeGreaterThanOrEqual(1);
    for (const id of twice) expect(new Set(burst.filter((r) => r.id === id).map((r) => r.body)).size).toBe(1);
    receiverA.delayMs = 0;
  });

  it("a user's revoked grant stops that user's events at once: queued ones are dropped, grant.revoked arrives, later ones are never queued", async () => {
    receiverA.delayMs = 1500;
    const queued: string[] = [];
    for (let i = 0; i < 3; i++) queued.push((await order(aliceToken, { limitPrice: `${80 + i}.00` })).body.id);
    await receiverA.until(
      (r) => r.received.some((x) => x.verified?.['data']?.['order']?.['id'] === queued[0]),
      'the first to be in flight',
    );
    const [grant] = await p.auth.dataSource.query(
      `SELECT id FROM oauth_grants WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL`,
      [alice.id, appA.clientId],
    );
    await p.auth.grants.revokeForUser(alice.id, grant.id);
    receiverA.delayMs = 0;
    await receiverA.until((r) => r.messages().some((m) => m['type'] === 'grant.revoked'), 'grant.revoked');
    const revoked = receiverA.messages().find((m) => m['type'] === 'grant.revoked')!;
    expect(revoked['data']).toMatchObject({ clientId: appA.clientId });
    expect(revoked['data']['subject']).toMatch(/^[\w-]{43}$/);
    expect(JSON.stringify(revoked)).not.toContain(alice.id);
    const dropped = await api('GET', `/webhooks/deliveries?endpointId=${endpointA}&status=DROPPED`, appA);
    expect(dropped.body.deliveries.length).toBeGreaterThanOrEqual(1);
    expect(receiverA.messages().some((m) => m['data']['order']?.['id'] === queued[2])).toBe(false);
    // Alice goes on trading with the other app she still has connected: it hears of her next order, the app she left does not.
    const appC = await provisionApp(p, { scopes: SCOPES, appName: 'Alice keeps this one' }, SCOPES);
    const receiverC = await WebhookReceiver.start();
    try {
      await register(appC, receiverC);
      const tokenC = (await tokensFor(p, appC, alice, SCOPES.join(' '))).access_token;
      const later = await order(tokenC, { limitPrice: '70.00' });
      expect(later.status).toBe(201);
      await receiverC.until((r) => of(r, 'order.accepted', later.body.id).length === 1, 'the later order at the app she kept');
      const queued = await p.auth.dataSource.query(
        `SELECT e.client_id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN webhook_events ev ON ev.id = d.event_id
          WHERE ev.data -> 'order' ->> 'id' = $1`,
        [later.body.id],
      );
      expect(queued.map((r: { client_id: string }) => r.client_id)).toEqual([appC.clientId]);
      expect(receiverA.messages().some((m) => m['data']['order']?.['id'] === later.body.id)).toBe(false);
    } finally {
      await receiverC.close();
    }
  });

  it('PROD: an endpoint leading to this machine or the metadata address is refused at registration, and at send time after its name changed', async () => {
    for (const redirect of ['https://vendor.example/uat', 'https://vendor.example/prod'])
      expect((await admin(p, 'POST', `/apps/${appA.appId}/promote`, { redirectUris: [redirect] })).status).toBe(201);
    for (const url of [
      'https://127.0.0.1:8443/hooks',
      'https://169.254.169.254/latest/meta-data',
      'https://10.1.2.3/hooks',
      'https://[::1]/hooks',
      'http://127.0.0.1:9/hooks',
    ]) {
      const res = await admin(p, 'POST', `/apps/${appA.appId}/webhooks`, { environment: 'PROD', url });
      expect({ url, status: res.status, field: res.body.field }).toEqual({ url, status: 422, field: 'url' });
    }
    const registered = await admin(p, 'POST', `/apps/${appA.appId}/webhooks`, { environment: 'PROD', url: 'https://93.184.216.34/hooks' });
    expect(registered.status).toBe(201);
    // A listener on this machine counts every connection made to it: there must be none.
    let connections = 0;
    const trap: Server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    const prodAuth = await extraAuth(p, {
      APP_ENV: 'PROD',
      SMTP_URL: 'smtp://127.0.0.1:9',
      WEBHOOK_DISPATCH_POLL_MS: 100,
      WEBHOOK_RETRY_SCHEDULE_SECONDS: [60],
    });
    try {
      for (const url of [`https://127.0.0.1:${(trap.address() as AddressInfo).port}/hooks`, 'https://169.254.169.254/latest/meta-data']) {
        // What a name that resolved to a public address at registration could lead to later.
        await p.auth.dataSource.query(`UPDATE webhook_endpoints SET url = $2 WHERE id = $1`, [registered.body.id, url]);
        const [event] = await p.auth.dataSource.query(
          `INSERT INTO webhook_events (id, type, user_id, dedupe_key, data, occurred_at)
           VALUES (gen_random_uuid(), 'grant.revoked', $1, 'attack:' || gen_random_uuid(), jsonb_build_object('clientId', 'x', 'revokedAt', now()), now()) RETURNING id`,
          [alice.id],
        );
        await p.auth.dataSource.query(`INSERT INTO webhook_deliveries (event_id, endpoint_id) VALUES ($1, $2)`, [
          event.id,
          registered.body.id,
        ]);
        const attempts = await until(
          () =>
            p.auth.dataSource.query(
              `SELECT a.status_code, a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.event_id = $1`,
              [event.id],
            ),
          (rows: any[]) => rows.length >= 1,
          `an attempt at ${url}`,
        );
        expect({ url, attempts }).toEqual({ url, attempts: [{ status_code: null, error: 'address not allowed' }] });
      }
      expect(connections).toBe(0);
    } finally {
      await prodAuth.close();
      await new Promise((resolve) => trap.close(resolve));
    }
  });
});
