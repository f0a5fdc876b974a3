/**
 * Instructions retired during a window, per process and for the whole machine, counted by Linux
 * `perf stat` (the CPU's own counters). Unlike CPU time they do not move with the machine's speed
 * of the hour (another tenant's load, the clock), so a lever's before and after compare across
 * runs. Nothing when perf cannot count them here: not installed, no counters in this VM, or not
 * permitted; the row then reports CPU time alone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
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

/**
 * The count in `perf stat -x,` output (`<count>,,instructions,…`); null when perf says it could
 * not count (`<not supported>`, `<not counted>`) or wrote no such line.
 */
export function instructionsIn(output: string): number | null {
  for (const line of output.split('\n')) {
    const [count, , event] = line.split(',');
    if (event?.startsWith('instructions') && count && /^\d+$/.test(count)) return Number(count);
  }
  return null;
}

/** Starts counting; `finish()` stops and reads the counts (undefined when any could not be read). */
export function startInstructionCount(processes: Watched[]): { finish(): Promise<InstructionUse | undefined> } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-perf-'));
  const groups = new Map<string, number[]>();
  for (const p of processes) groups.set(p.name, [...(groups.get(p.name) ?? []), p.pid]);
  const counters: Array<{ name: string | null; file: string; child: ChildProcess; exited: Promise<void> }> = [];
  const count = (name: string | null, target: string[]) => {
    const file = join(dir, `${counters.length}.csv`);
    const child = spawn('perf', ['stat', '-x', ',', '-e', 'instructions', '-o', file, ...target], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve()); // no perf here
    });
    counters.push({ name, file, child, exited });
  };
  count(null, ['-a']);
  for (const [name, pids] of groups) count(name, ['-p', pids.join(',')]);
  return {
    async finish() {
      for (const c of counters) c.child.kill('SIGINT');
      await Promise.all(counters.map((c) => c.exited));
      try {
        const read = (file: string) => {
          try {
            return instructionsIn(readFileSync(file, 'utf8'));
          } catch {
            return null;
          }
        };
        const machine = read(counters[0]!.file);
        if (machine === null) return undefined;
        // A group perf could not follow (a backend gone before the window) is left out, not counted as nothing.
        const byName = counters.slice(1).flatMap((c) => {
          const instructions = read(c.file);
          return instructions === null ? [] : [{ name: c.name!, instructions }];
        });
        return { machine, byName };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
