/**
 * Summarises V8 CPU profiles (BENCH_CPU_PROFILE) by package: self time per npm package (or
 * "ours", "node:" internals, GC, idle), the top functions, for "a profile of what remains".
 *
 *   npx tsx tools/bench/profile-summary.ts <file.cpuprofile>…
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code comes from: the package under node_modules, our code, Node's internals or V8's own work. */
export function ownerOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return 'ours';
}

function summarise(file: string): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfByOwner = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const owner = ownerOf(node.callFrame.url, node.callFrame.functionName);
    selfByOwner.set(owner, (selfByOwner.get(owner) ?? 0) + dt);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${owner === 'ours' ? basename(node.callFrame.url) : owner}`;
    selfByFunction.set(fn, (selfByFunction.get(fn) ?? 0) + dt);
  });
  const busy = total - (selfByOwner.get('(idle)') ?? 0);
  const pct = (v: number) => `${((100 * v) / busy).toFixed(1)}%`;
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .filter(([k]) => k !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `  ${pct(v).padStart(6)}  ${k}`)
      .join('\n');
  return [
    `${basename(file)}: ${(busy / 1e6).toFixed(1)} s busy of ${(total / 1e6).toFixed(1)} s`,
    'self time by package (% of busy):',
    top(selfByOwner, 15),
    'top functions:',
    top(selfByFunction, 12),
  ].join('\n');
}

if (require.main === module) {
  const files = process.argv.slice(2);
  if (!files.length) {
    console.error('usage: tsx tools/bench/profile-summary.ts <file.cpuprofile>…');
    process.exit(2);
  }
  for (const file of files) console.log(`${summarise(file)}\n`);
}
