import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { TestPlatform } from './test-platform';

const ROOT = join(__dirname, '../../../..');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `npm run admin -- …` as the service team runs it, against a test platform's admin API;
 * `stdin` is what is piped in (a password), closed at once otherwise.
 */
export function adminCli(p: TestPlatform, args: string[], stdin = ''): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(join(ROOT, 'node_modules/.bin/tsx'), ['tools/admin/cli.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, ADMIN_URL: p.urls.adminApi, ADMIN_TOKEN: p.adminToken },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}
