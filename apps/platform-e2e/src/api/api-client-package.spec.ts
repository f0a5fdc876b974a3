import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { admin } from '../support/oauth-helpers';
import { newUser } from '../support/pat-helpers';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

/**
 * @trading/api-client is a package a vendor installs. This suite does what a vendor
 * does, outside the repository: `npm pack` (its prepack builds dist/ with tsc), `npm install` of
 * the tarball into a fresh folder under the OS temp directory, then plain `node` scripts there
 * (ES module and CommonJS) that import the package by name and call a running platform with a
 * real PAT session; the repository's tsc type-checks a consumer against the packed .d.ts.
 */
const REPO = resolve(__dirname, '../../../..');
const PACKAGE = join(REPO, 'libs/api-client');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A child process to completion; `env` replaces the environment (no NODE_OPTIONS, NODE_PATH: plain Node and npm). */
function run(command: string, args: string[], cwd: string, env: Record<string, string | undefined> = cleanEnv()): Promise<Run> {
  return new Promise((done) => {
    execFile(command, args, { cwd, env, timeout: 120_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

function cleanEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env = { ...process.env, ...extra };
  delete env.NODE_OPTIONS;
  delete env.NODE_PATH;
  delete env.npm_config_local_prefix; // set when the tests run under `npm test`; the vendor's folder is its own project
  return env;
}

function ok(what: string, r: Run): Run {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** The script a vendor writes: ES module, the package imported by name. Prints one JSON line. */
const VENDOR_SCRIPT = `
import { createTradingClient, idempotencyHeader } from '@trading/api-client';

const baseUrl = process.env.TRADING_API_URL;
const login = await createTradingClient({ baseUrl }).POST('/pat/login', { body: { token: process.env.TRADING_PAT } });
let asked = 0;
const api = createTradingClient({ baseUrl, getAccessToken: async () => (asked++, login.data.token) });
const accounts = await api.GET('/accounts');
const bad = await api.POST('/oms/order', {
  params: { header: idempotencyHeader() },
  body: { accountId: accounts.data.accounts[0].id, symbol: 'AAPL', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: 'lots', limitPrice: '190.00' },
});
const anonymous = await createTradingClient({ baseUrl }).GET('/accounts');
console.log(JSON.stringify({
  resolved: { client: import.meta.resolve('@trading/api-client'), fetch: import.meta.resolve('openapi-fetch') },
  login: login.response.status,
  accounts: { status: accounts.response.status, ids: accounts.data.accounts.map((a) => a.id) },
  bad: { status: bad.response.status, contentType: bad.response.headers.get('content-type'), error: bad.error },
  anonymous: { status: anonymous.response.status, code: anonymous.error?.code },
  asked,
}));
`;

/** The same from CommonJS. */
const COMMONJS_SCRIPT = `
const { createTradingClient, createTradingApiClient, newIdempotencyKey } = require('@trading/api-client');
console.log(JSON.stringify({
  resolved: require.resolve('@trading/api-client'),
  exports: [typeof createTradingClient, typeof createTradingApiClient, typeof newIdempotencyKey],
}));
`;

/** What a TypeScript consumer compiles against: the packed .d.ts, generated schema types included. */
const TYPED = `
import { createTradingClient, idempotencyHeader, type Problem, type Schemas } from '@trading/api-client';

const api = createTradingClient({ baseUrl: 'http://localhost:8080/v1', getAccessToken: async () => 'token' });
export async function positions(accountId: string): Promise<Schemas['PositionItem'][] | Problem> {
  const { data, error } = await api.GET('/accounts/{accountId}/positions', { params: { path: { accountId }, query: { limit: 10 } } });
  return error ?? data.positions;
}
export const placed = api.POST('/oms/order', {
  params: { header: idempotencyHeader() },
  body: { accountId: 'a', symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1' },
});
// @ts-expect-error not a path of the API
export const unknown = api.GET('/no-such-path');
// @ts-expect-error side is BUY or SELL
export const wrong = api.POST('/oms/order', { body: { accountId: 'a', symbol: 'AAPL', side: 'HOLD', type: 'MARKET', timeInForce: 'DAY', quantity: '1' } });
`;

describe('@trading/api-client as an installed package', () => {
  let p: TestPlatform;
  let work: string;
  let app: string;
  let packed: { filename: string; files: Array<{ path: string }> };
  let install: { mode: string };

  async function packAndInstall() {
    work = realpathSync(await mkdtemp(join(tmpdir(), 'trading-api-client-')));
    // `npm pack` runs the package's prepack, which builds dist/ (tsc), so a fresh clone needs no other step.
    const pack = ok('npm pack', await run('npm', ['pack', '--json', '--pack-destination', work], PACKAGE));
    [packed] = JSON.parse(pack.stdout);
    app = join(work, 'vendor-app');
    await mkdir(app);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'vendor-app', version: '1.0.0', private: true }));
    const tarball = join(work, packed.filename);
    // openapi-fetch comes from the npm cache (`npm ci` put it there); without the registry's
    // metadata in the cache too, --offline cannot resolve its range, so then ask the registry.
    let mode = '--offline';
    let installed = await run('npm', ['install', mode, '--no-audit', '--no-fund', tarball], app);
    if (installed.code !== 0 && /ENOTCACHED/.test(installed.stderr)) {
      mode = '--prefer-offline';
      installed = await run('npm', ['install', mode, '--no-audit', '--no-fund', tarball], app);
    }
    ok('npm install', installed);
    install = { mode };
  }

  beforeAll(async () => {
    [p] = await Promise.all([startTestPlatform(), packAndInstall()]);
  }, 180_000);
  afterAll(async () => {
    await p?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('packs the built JavaScript, the declarations with the generated schema types, the document, README and example; no sources', () => {
    expect(relative(REPO, work).startsWith('..')).toBe(true);
    const files = packed.files.map((f) => f.path).sort();
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'package.json',
        'openapi.json',
        'examples/portfolio.mjs',
        'dist/index.js',
        'dist/index.mjs',
        'dist/index.d.ts',
        'dist/index.d.mts',
        'dist/schema.d.ts',
      ]),
    );
    expect(files.filter((f) => /^src\/|\.spec\.|build\.mjs|tsconfig|project\.json|jest\.config/.test(f))).toEqual([]);
    expect(packed.filename).toMatch(/^trading-api-client-\d+\.\d+\.\d+\.tgz$/);
    expect(['--offline', '--prefer-offline']).toContain(install.mode);
  });

  it('a vendor script imports it by name from its own node_modules, logs in with a PAT, lists accounts and reads a problem+json', async () => {
    const user = await newUser(p);
    const pat = await admin(p, 'POST', '/pats', { email: user.email, name: 'vendor script', scope: 'READ_WRITE', expires: inDays(5) });
    const opened = await admin(p, 'POST', '/accounts', { email: user.email, type: 'CASH', currency: 'USD' });
    await writeFile(join(app, 'vendor.mjs'), VENDOR_SCRIPT);

    const r = ok(
      'node vendor.mjs',
      await run(process.execPath, ['vendor.mjs'], app, cleanEnv({ TRADING_API_URL: p.urls.api, TRADING_PAT: pat.body.token })),
    );
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    const modules = pathToFileURL(join(app, 'node_modules')).href;
    expect(out.resolved).toEqual({
      client: `${modules}/@trading/api-client/dist/index.mjs`,
      fetch: expect.stringMatching(new RegExp(`^${modules}/openapi-fetch/`)),
    });
    expect(out.login).toBe(200);
    expect(out.accounts).toEqual({ status: 200, ids: [opened.body.accountId] });
    expect(out.bad).toMatchObject({
      status: 400,
      contentType: expect.stringMatching(/^application\/problem\+json/),
      error: { status: 400, code: 'BAD_USER_INPUT', field: 'quantity', requestId: expect.any(String) },
    });
    expect(out.anonymous).toEqual({ status: 401, code: 'UNAUTHENTICATED' });
    expect(out.asked).toBe(2); // getAccessToken is asked before every request
  }, 60_000);

  it('runs the packaged example against the API: accounts and their positions', async () => {
    const user = await newUser(p);
    const pat = await admin(p, 'POST', '/pats', { email: user.email, name: 'portfolio', scope: 'READ_ONLY', expires: inDays(5) });
    const opened = await admin(p, 'POST', '/accounts', { email: user.email, type: 'MARGIN', currency: 'USD' });
    await copyFile(join(app, 'node_modules/@trading/api-client/examples/portfolio.mjs'), join(app, 'portfolio.mjs'));
    const r = ok(
      'node portfolio.mjs',
      await run(process.execPath, ['portfolio.mjs'], app, cleanEnv({ TRADING_API_URL: p.urls.api, TRADING_PAT: pat.body.token })),
    );
    expect(r.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^account ${opened.body.accountId} \\S+ MARGIN USD ACTIVE$`)),
      '  0 positions',
    ]);
    const refused = await run(process.execPath, ['portfolio.mjs'], app, cleanEnv({ TRADING_API_URL: p.urls.api, TRADING_PAT: 'tpat_x.y' }));
    expect([refused.code, refused.stderr.trim()]).toEqual([1, expect.stringMatching(/^PAT login failed: HTTP 401 /)]);
  }, 60_000);

  it('works from CommonJS too, and type-checks a TypeScript consumer (ESM and CommonJS) against the packed declarations', async () => {
    await writeFile(join(app, 'check.cjs'), COMMONJS_SCRIPT);
    const cjs = JSON.parse(ok('node check.cjs', await run(process.execPath, ['check.cjs'], app)).stdout);
    expect(cjs).toEqual({
      resolved: join(app, 'node_modules/@trading/api-client/dist/index.js'),
      exports: ['function', 'function', 'function'],
    });

    await writeFile(join(app, 'typed.mts'), TYPED);
    await writeFile(join(app, 'typed.cts'), TYPED);
    await writeFile(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'node16',
          moduleResolution: 'node16',
          lib: ['ES2022', 'DOM'],
          types: [],
          skipLibCheck: true,
        },
        files: ['typed.mts', 'typed.cts'],
      }),
    );
    const tsc = await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--listFiles'], app);
    expect(tsc.stdout.split('\n').filter((line) => /error TS/.test(line))).toEqual([]);
    expect(tsc.code).toBe(0);
    // The declarations come from the installed package: index.d.mts for the ES module, index.d.ts for CommonJS.
    const packageFiles = tsc.stdout.split('\n').filter((line) => line.includes('/@trading/api-client/'));
    expect(packageFiles.sort()).toEqual(
      ['index.d.mts', 'index.d.ts', 'schema.d.ts'].map((f) => join(app, 'node_modules/@trading/api-client/dist', f)),
    );
  }, 60_000);
});
