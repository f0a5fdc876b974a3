/**
 * `npm run reset`: starts the all-in-one over. Deletes its data directory (cluster or pointer,
 * credentials, demo secrets, mail log) and, run as root, the cluster kept for it under /var/lib,
 * after asking (or with --yes). The platform must be stopped first: a running one holds the port.
 */
import { existsSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { defaultPlatformDataDir } from '@trading/config';
import { clusterPath } from './embedded-postgres';

async function main(): Promise<number> {
  const dataDir = process.env['PLATFORM_DATA_DIR'] || defaultPlatformDataDir();
  const cluster = clusterPath(dataDir);
  const doomed = [dataDir, cluster].filter((path, i, all) => existsSync(path) && all.indexOf(path) === i);
  if (!doomed.length) {
    console.log(`Nothing to reset: ${dataDir} does not exist.`);
    return 0;
  }
  if (!process.argv.includes('--yes')) {
    if (!process.stdin.isTTY) {
      console.error(`This deletes ${doomed.join(' and ')}. Run it in a terminal to be asked, or add --yes.`);
      return 2;
    }
    const prompt = createInterface({ input: process.stdin, output: process.stdout });
    const answer = await prompt.question(
      `This deletes ${doomed.join(' and ')}: the demo database, credentials and mail of this installation. Type "reset" to go on: `,
    );
    prompt.close();
    if (answer.trim() !== 'reset') {
      console.log('Nothing was deleted.');
      return 1;
    }
  }
  for (const path of doomed) rmSync(path, { recursive: true, force: true });
  console.log(`Deleted ${doomed.join(' and ')}. The next npm start begins a new installation.`);
  return 0;
}

void main().then((code) => process.exit(code));
