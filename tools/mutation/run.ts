// `npm run mutation [-- [--force] group …]`: runs StrykerJS on each mutation group
// (tools/mutation/targets.js) in turn, each from its recorded result (incremental), then prints
// every file's mutation score and fails when a group is under the 85 % floor.
// `npm run mutation -- ledger` runs one group. `--force` tests every mutant again: needed after
// adding tests, because a recorded survivor in module-level code (a table, a pattern) is not
// re-tested when only new tests could kill it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const FLOOR = 85;
const root = join(__dirname, '..', '..');
const groups: Record<string, { mutate: string[] }> = createRequire(__filename)('./targets.js');

interface MutantRecord {
  status: string;
}
interface Report {
  files: Record<string, { mutants: MutantRecord[] }>;
}

/** Killed or timed out: a spec noticed. Survived or not covered: none did. Ignored and broken mutants do not count. */
function score(mutants: MutantRecord[]): { detected: number; undetected: number; percent: number } {
  const detected = mutants.filter((m) => m.status === 'Killed' || m.status === 'Timeout').length;
  const undetected = mutants.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage').length;
  const total = detected + undetected;
  return { detected, undetected, percent: total ? (100 * detected) / total : 100 };
}

function runGroup(name: string, force: boolean): boolean {
  console.log(`\n== mutation group ${name}`);
  const run = spawnSync('npx', ['stryker', 'run', 'tools/mutation/stryker.config.mjs', ...(force ? ['--force'] : [])], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, MUTATION_GROUP: name },
  });
  return run.status === 0;
}

function summary(names: string[]): boolean {
  let ok = true;
  const rows: string[][] = [];
  for (const name of names) {
    const file = join(root, 'reports', 'mutation', `${name}.json`);
    if (!existsSync(file)) {
      rows.push([name, '(no result)', '', '']);
      ok = false;
      continue;
    }
    const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
    const all = Object.values(report.files).flatMap((f) => f.mutants);
    const total = score(all);
    if (total.percent < FLOOR) ok = false;
    rows.push([name, `${total.percent.toFixed(2)} %`, String(total.detected), String(total.undetected)]);
    for (const [path, f] of Object.entries(report.files)) {
      const s = score(f.mutants);
      rows.push([`  ${path}`, `${s.percent.toFixed(2)} %`, String(s.detected), String(s.undetected)]);
    }
  }
  const widths = [0, 1, 2, 3].map((i) =>
    Math.max(...[['group / file', 'score', 'detected', 'undetected'], ...rows].map((r) => r[i]!.length)),
  );
  const line = (r: string[]) => r.map((c, i) => (i ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  console.log(`\n${line(['group / file', 'score', 'detected', 'undetected'])}`);
  for (const r of rows) console.log(line(r));
  return ok;
}

const force = process.argv.includes('--force');
const asked = process.argv.slice(2).filter((a) => a !== '--force');
const unknown = asked.filter((g) => !groups[g]);
if (unknown.length) {
  console.error(`unknown mutation group ${unknown.join(', ')}: the groups are ${Object.keys(groups).join(', ')}`);
  process.exit(2);
}
const names = asked.length ? asked : Object.keys(groups);
const ran = names.map((name) => runGroup(name, force)).every(Boolean);
const floorMet = summary(names);
console.log(ran && floorMet ? `\nmutation: every group at or above ${FLOOR} %` : `\nmutation: a group failed or is under ${FLOOR} %`);
process.exit(ran && floorMet ? 0 : 1);
