import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LISTENER_PORTS, loadPlatformConfig } from '@trading/platform';
import { startNpmStart, type NpmStart } from '../support/npm-start-process';

const ROOT = join(__dirname, '../../../..');

/**
 * The shell snippets of docs/ that a reader runs against a started platform, marked
 * ```bash runnable: each in document order, as a reader pastes it (bash, in the repository).
 */
function runnableBlocks(): Array<{ where: string; script: string }> {
  const blocks: Array<{ where: string; script: string }> = [];
  for (const file of readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'))) {
    const lines = readFileSync(join(ROOT, 'docs', file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/^```(bash|sh)\s+runnable\s*$/.test(lines[i]!)) continue;
      const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
      blocks.push({ where: `docs/${file}:${i + 1}`, script: lines.slice(i + 1, end).join('\n') });
      i = end;
    }
  }
  return blocks;
}

/** Every file git would report as new (untracked or ignored), so a snippet that writes into the repository shows. */
const newFiles = () =>
  execFileSync('git', ['status', '--porcelain', '--ignored'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.startsWith('??') || line.startsWith('!!'));

/** Runs `script` with bash (-e, pipefail: a failing step fails it), then ends whatever it left in the background. */
function runBash(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-eo', 'pipefail', '-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk) => (output += String(chunk)));
    child.stderr.on('data', (chunk) => (output += String(chunk)));
    const timeout = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 120_000);
    child.once('exit', (code) => {
      clearTimeout(timeout);
      try {
        process.kill(-child.pid!, 'SIGKILL'); // a background job of the snippet
      } catch {
        // none left
      }
      resolve({ code, output });
    });
  });
}

describe('the runnable shell snippets of docs/, against a started platform, in a new HOME', () => {
  const home = mkdtempSync(join(tmpdir(), 'docs-home-'));
  let platform: NpmStart;
  const before = newFiles();

  beforeAll(async () => {
    // The reader's installation: the default data directory of their HOME, where the snippets look.
    platform = await startNpmStart({ HOME: home, PLATFORM_DATA_DIR: join(home, '.local/share/trading-api-platform') });
  }, 120_000);
  afterAll(async () => {
    await platform?.cleanUp();
    rmSync(home, { recursive: true, force: true });
  });

  const blocks = runnableBlocks();
  it('there are some: the demo PAT, a new user first steps, the service keys', () => {
    expect(blocks.map((b) => b.where.split(':')[0])).toEqual(['docs/operations.md', 'docs/operations.md', 'docs/operations.md']);
  });

  it.each(blocks.map((b) => [b.where, b.script] as const))(
    '%s exits 0',
    async (_where, script) => {
      // The documented addresses are the default ports; this platform listens on free ones.
      const defaults = loadPlatformConfig({});
      let adapted = script;
      for (const name of LISTENER_PORTS)
        adapted = adapted.replace(new RegExp(`(localhost|127\\.0\\.0\\.1):${defaults[name]}\\b`, 'g'), `$1:${platform.env[name]}`);
      const { code, output } = await runBash(adapted, {
        PATH: process.env['PATH'] ?? '',
        HOME: home,
        ADMIN_URL: `http://127.0.0.1:${platform.env['AUTH_ADMIN_PORT']}`,
        ADMIN_TOKEN: platform.adminToken,
      });
      expect({ code, output: code === 0 ? '' : output.slice(-3000) }).toEqual({ code: 0, output: '' });
    },
    150_000,
  );

  it('leaves nothing new in the repository (not even ignored files)', () => {
    expect(newFiles().filter((line) => !before.includes(line))).toEqual([]);
  });
});
