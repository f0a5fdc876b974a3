/**
 * Instructions retired during a window, per process and for the whole machine, counted by Linux
 * `perf stat` (the CPU's own counters). Unlike CPU time they do not move with the machine's speed
 * of the hour, so a lever's before and after compare across runs. Nothing where perf cannot count
 * them (not installed, no counters in this VM, not permitted): the row then reports CPU time alone.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Watched } from './proc';

export interface InstructionUse {
  /** By the names the table shows (several pids of one name, such as postgres's backends, summed). */
  byName: Array<{ name: string; instructions: number }>;
  /** Every process on the machine and the kernel. */
  machine: number;
}

/** The count in `perf stat -x,` output (`<count>,,instructions,…`); null where perf could not count (`<not supported>`, no such line). */
export function instructionsIn(output: string): number | null {
  for (const line of output.split('\n')) {
    const [count, , event] = line.split(',');
    if (event?.startsWith('instructions') && count && /^\d+$/.test(count)) return Number(count);
  }
  return null;
}

/** Starts one `perf stat -a` and one `-p` per name; `finish()` stops them and reads the counts (undefined without the machine's). */
export function startInstructionCount(processes: Watched[]): { finish(): Promise<InstructionUse | undefined> } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-perf-'));
  const groups = new Map<string, number[]>();
  for (const p of processes) groups.set(p.name, [...(groups.get(p.name) ?? []), p.pid]);
  const counters = [['-a'], ...[...groups.values()].map((pids) => ['-p', pids.join(',')])].map((target, i) => {
    const file = join(dir, `${i}.csv`);
    const child = spawn('perf', ['stat', '-x', ',', '-e', 'instructions', '-o', file, ...target], { stdio: 'ignore' });
    // No perf here: an error instead of an exit.
    const exited = new Promise<void>((resolve) => ['exit', 'error'].forEach((e) => child.once(e, () => resolve())));
    return { file, child, exited };
  });
  const read = (file: string) => {
    try {
      return instructionsIn(readFileSync(file, 'utf8'));
    } catch {
      return null;
    }
  };
  return {
    async finish() {
      for (const c of counters) c.child.kill('SIGINT');
      await Promise.all(counters.map((c) => c.exited));
      try {
        const [machine, ...each] = counters.map((c) => read(c.file));
        if (machine === null || machine === undefined) return undefined;
        // A group perf could not follow (a backend gone before the window) is left out, not counted as nothing.
        const names = [...groups.keys()];
        return { machine, byName: each.flatMap((instructions, i) => (instructions === null ? [] : [{ name: names[i]!, instructions }])) };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
