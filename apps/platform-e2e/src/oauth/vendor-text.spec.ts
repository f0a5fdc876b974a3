import { adminCli, registrationFile } from '../support/admin-cli';
import { admin, provisionApp, registration } from '../support/oauth-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/** Anything a terminal acts on or that reorders text, except the line breaks of the CLI's own layout. */
const RAW = /(?!\n)[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
/** Moves the cursor up a line, clears it and draws a row of its own; then rings and retitles the terminal. */
const FAKE_ROW = 'Acme\u001b[1A\u001b[2K\rTrusted Bank Ltd ACTIVE\u0007\u001b]0;pwned\u0007';

/** A vendor's text may steer neither the operator's terminal nor what a user reads. */
describe('text from vendors is text', () => {
  let p: TestPlatform;
  const file = registrationFile;

  beforeAll(async () => {
    p = await startTestPlatform();
  }, 60_000);
  afterAll(() => p?.stop());

  it('attack: registering with ESC, BEL, DEL, C1 or bidi controls in any field is refused 422, naming the field', async () => {
    const hostile: Record<string, unknown> = {
      companyName: `Acme ${FAKE_ROW}`,
      companyWebsite: 'https://acme.example/\u202egnp.exe',
      businessEmail: 'ops\u0007@acme.example',
      phone: '+44 20\u009b7946 0000',
      appName: 'Portfolio\u2066 (verified)\u2069',
      description: 'Analytics\u007f',
      logoUrl: 'https://acme.example/logo\u001b.png',
      homepageUrl: 'https://acme.example/\u200f',
      supportEmail: 'help\u061c@acme.example',
      supportUrl: 'https://acme.example/help\u001b[2J',
      privacyPolicyUrl: 'https://acme.example/privacy\u202a',
      termsOfServiceUrl: 'https://acme.example/terms\u0085',
    };
    for (const [field, value] of Object.entries(hostile)) {
      const res = await admin(p, 'POST', '/apps', { registration: registration({ [field]: value }) });
      expect([field, res.status, res.body.problems]).toEqual([
        field,
        422,
        [{ field, message: expect.stringMatching(/^must not contain control characters or bidirectional-text controls \(found U\+/) }],
      ]);
    }
    const lists: Array<[Record<string, unknown>, string]> = [
      [{ redirectUris: ['https://acme.example/cb', 'https://acme.example/cb\u001b[31m'] }, 'redirectUris[1]'],
      [{ webOrigins: ['https://app.acme.example\u202e'] }, 'webOrigins[0]'],
      [{ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.acme.example/\u0007' }, 'jwksUri'],
    ];
    for (const [overrides, field] of lists) {
      const res = await admin(p, 'POST', '/apps', { registration: registration(overrides) });
      expect([field, res.status, res.body.problems?.map((x: { field: string }) => x.field)]).toEqual([field, 422, [field]]);
    }
    // Nothing of it was stored.
    const stored = await p.auth.dataSource.query(`SELECT count(*)::int AS n FROM vendor_apps WHERE company_name LIKE 'Acme%'`);
    expect(stored[0].n).toBe(0);

    // A promotion brings redirect URIs and pages of its own: the same rule.
    const app = await provisionApp(p);
    const promoted = await admin(p, 'POST', `/apps/${app.appId}/promote`, {
      redirectUris: ['https://uat.acme.example/cb\u2067'],
      pages: { logoUrl: 'https://cdn.acme.example/\u001b]0;x\u0007.png' },
    });
    expect([promoted.status, promoted.body.problems.map((x: { field: string }) => x.field)]).toEqual([422, ['redirectUris[0]', 'logoUrl']]);

    // The CLI says so, and echoes nothing raw.
    const cli = await adminCli(p, ['apps', 'provision', '--file', file(registration({ appName: FAKE_ROW }))]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('appName: must not contain control characters');
    expect(cli.stderr).not.toMatch(RAW);
  });

  it('attack: rows already holding control or bidi characters print escaped in every CLI output', async () => {
    const app = await provisionApp(p, { appName: 'Harmless App', companyName: 'Harmless Ltd' });
    // As if written before registration refused them, or by hand in SQL.
    await p.auth.dataSource.query(`UPDATE vendor_apps SET app_name = $2, company_name = $3 WHERE id = $1`, [
      app.appId,
      FAKE_ROW,
      'Evil\u202eLtd\u009b2J\nSECOND LINE',
    ]);
    await p.auth.dataSource.query(`UPDATE vendor_app_credentials SET redirect_uris = $2 WHERE client_id = $1`, [
      app.clientId,
      ['https://vendor.example/cb\u001b[8m'],
    ]);
    const [{ email }] = await p.auth.dataSource.query(`SELECT email FROM users ORDER BY created_at LIMIT 1`);
    await p.auth.dataSource.query(`UPDATE users SET first_name = $2 WHERE email = $1`, [email, 'Alice\u001b[2J\u2066']);

    const listed = await adminCli(p, ['apps', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toMatch(RAW);
    const row = listed.stdout.split('\n').find((line) => line.startsWith(app.appId))!;
    expect(row).toContain(
      'Acme\\x1b[1A\\x1b[2K\\x0dTrusted Bank Ltd ACTIVE\\x07\\x1b]0;pwned\\x07 (Evil\\u{202e}Ltd\\x9b2J\\x0aSECOND LINE)  ACTIVE',
    );
    expect(listed.stdout).toContain('https://vendor.example/cb\\x1b[8m');
    // A value's line break draws no line of its own.
    expect(listed.stdout.split('\n').some((line) => line.startsWith('SECOND LINE'))).toBe(false);

    const json = await adminCli(p, ['apps', 'list', '--json']);
    expect(json.stdout).not.toMatch(RAW);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.apps.find((a: { appId: string }) => a.appId === app.appId)).toMatchObject({ appName: FAKE_ROW });

    const users = await adminCli(p, ['users', 'list']);
    expect(users.stdout).toContain('Alice\\x1b[2J\\u{2066}');
    expect(users.stdout).not.toMatch(RAW);

    // The server's messages name the app: an error printed by the CLI is escaped as well.
    const suspended = await adminCli(p, ['apps', 'suspend', '--app', app.appId]);
    expect(suspended.stdout).toContain('suspended "Acme\\x1b[1A');
    const refused = await adminCli(p, ['apps', 'promote', '--app', app.appId, '--redirect-uri', 'https://uat.vendor.example/cb']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Trusted Bank Ltd ACTIVE\\x07');
    for (const run of [suspended, refused]) expect(run.stdout + run.stderr).not.toMatch(RAW);
  }, 60_000);
});
