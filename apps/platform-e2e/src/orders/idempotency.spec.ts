import { randomUUID } from 'node:crypto';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { patSession, scopedSession } from '../support/sessions';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;

/** Idempotency-Key belongs to the user as one PAT or one app, lasts 24 h, and has one alphabet everywhere. */
describe('idempotency keys', () => {
  let p: TestPlatform;
  let script: string;
  let vendor: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    script = await patSession(p, alice.email, 'READ_WRITE');
    vendor = await scopedSession(p, alice.email, ['read:banking', 'write:banking']);
  }, 60_000);
  afterAll(() => p?.stop());

  const deposit = (token: string, key: string, amount: string) =>
    http('POST', `${p.urls.api}/banking/deposit`, {
      token,
      body: { accountId: aliceCash, amount, currency: 'USD' },
      headers: { 'Idempotency-Key': key },
    });

  it("abuse: a vendor app pre-claiming a key cannot block, or answer for, the user's own script using it", async () => {
    const key = `nightly-${randomUUID()}`;
    const byVendor = await deposit(vendor, key, '1.00');
    expect(byVendor.status).toBe(201);
    const byScript = await deposit(script, key, '2.00');
    expect(byScript.status).toBe(201);
    expect(byScript.body.id).not.toBe(byVendor.body.id);
    expect(byScript.body.amount).toBe('2.00');
    // Each still replays its own.
    expect((await deposit(script, key, '2.00')).body.id).toBe(byScript.body.id);
    expect((await deposit(vendor, key, '1.00')).body.id).toBe(byVendor.body.id);
  });

  it('frees a key after 24 hours', async () => {
    const key = `old-${randomUUID()}`;
    const first = await deposit(script, key, '3.00');
    expect(first.status).toBe(201);
    expect((await deposit(script, key, '4.00')).status).toBe(422);
    await p.services.banking.app!.dataSource.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1", [
      key,
    ]);
    const later = await deposit(script, key, '4.00');
    expect(later.status).toBe(201);
    expect(later.body.id).not.toBe(first.body.id);
  });

  it('accepts the same alphabet at the facade and in GraphQL: visible ASCII, no spaces', async () => {
    expect((await deposit(script, 'has space', '1.00')).body).toMatchObject({ status: 400, field: 'Idempotency-Key' });
    const gql = await http('POST', p.urls.gateway, {
      token: script,
      body: {
        query: 'mutation($i: FundingInput!, $k: String) { deposit(input: $i, idempotencyKey: $k) { id } }',
        variables: { i: { accountId: aliceCash, amount: '1.00', currency: 'USD' }, k: 'has space' },
      },
    });
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'idempotencyKey' });
  });
});
