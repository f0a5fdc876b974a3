import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** Where `npm run sample-vendor` runs from, and the tsx it runs with. */
export const SAMPLE_VENDOR_ROOT = join(__dirname, '../../../..');
export const SAMPLE_VENDOR_TSX = join(SAMPLE_VENDOR_ROOT, 'node_modules/.bin/tsx');

/** `npm run sample-vendor` as a vendor runs it: its own process, configured by environment variables. */
export async function startSampleVendor(env: Record<string, string>): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(SAMPLE_VENDOR_TSX, ['tools/sample-vendor/main.ts'], {
    cwd: SAMPLE_VENDOR_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sample vendor did not start: ${output}`)), 30_000);
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Sample vendor app on')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`sample vendor exited with ${code}: ${output}`)));
  });
  return { child, output: () => output };
}
