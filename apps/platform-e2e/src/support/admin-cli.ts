import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
  return runTool('tools/admin/cli.ts', args, { ADMIN_URL: p.urls.adminApi, ADMIN_TOKEN: p.adminToken }, stdin);
}

/** A registration document written to a file of its own, for `apps provision --file`. */
export function registrationFile(doc: unknown): string {
  const path = join(tmpdir(), `registration-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

/** One of the operators' tools (`tools/…/*.ts`) run as npm runs it, with `env` over this process's environment (undefined removes a variable). */
export function runTool(script: string, args: string[], env: Record<string, string | undefined>, stdin = ''): Promise<CliRun> {
  return new Promise((resolve) => {
    const merged: Record<string, string | undefined> = { ...process.env, ...env };
    for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
    const child = spawn(join(ROOT, 'node_modules/.bin/tsx'), [script, ...args], { cwd: ROOT, env: merged });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}
