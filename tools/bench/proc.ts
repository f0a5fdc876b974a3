/** CPU time and resident size of processes, read from Linux's /proc: what each process of a target costs. */
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** USER_HZ, the unit of utime/stime in /proc/<pid>/stat and of /proc/stat: 100 on every architecture Node runs on. */
const CLOCK_TICKS = 100;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** utime + stime (in ticks) of a /proc/<pid>/stat line, counted from the last ")": the command name may hold spaces or parentheses. */
export function cpuTicksOf(stat: string): number {
  const end = stat.lastIndexOf(')');
  if (end < 0) throw new Error(`not a /proc/<pid>/stat line: ${stat.slice(0, 80)}`);
  // After ")": field 3 (state) is index 0, so utime (field 14) is index 11 and stime (15) index 12.
  const fields = stat.slice(end + 2).split(' ');
  const [utime, stime] = [Number(fields[11]), Number(fields[12])];
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`no utime/stime in /proc/<pid>/stat: ${stat.slice(0, 80)}`);
  return utime + stime;
}

/** VmRSS in bytes from /proc/<pid>/status (its value is in kB). */
export function rssBytesOf(status: string): number {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!match) throw new Error('no VmRSS line in /proc/<pid>/status');
  return Number(match[1]) * 1024;
}

export const readRssBytes = (pid: number) => rssBytesOf(readFileSync(`/proc/${pid}/status`, 'utf8'));

/** Pids of a process's children (its main thread's; Node forks from there). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A process the bench watches, with the name the table shows. */
export type Watched = { name: string; pid: number };
/** A process's share of one core during the window (100 = one full core), and the CPU-seconds it spent. */
export type CpuUse = { name: string; percent: number; seconds: number };
/** The whole machine during a window: busy share (100 per core busy) and CPU-seconds, every process and the kernel included. */
export type MachineUse = { percent: number; cores: number; seconds: number };

/** Busy (all but idle and iowait) and total CPU ticks of the whole machine, from /proc/stat's first line. */
export function machineTicksOf(stat: string): { busy: number; total: number } {
  const fields = stat.split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  if (fields.length < 8 || fields.some((f) => !Number.isFinite(f))) throw new Error(`not a /proc/stat cpu line: ${stat.slice(0, 80)}`);
  const total = sum(fields);
  return { busy: total - fields[3]! - fields[4]!, total };
}

/** The local PostgreSQL server's processes (the bench's databases are on it), all named `postgres`. */
export function postgresServer(): Watched[] {
  const isPostgres = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
    } catch {
      return false; // gone meanwhile
    }
  };
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && isPostgres(entry))
    .map((pid) => ({ name: 'postgres', pid: Number(pid) }));
}

/** A process's CPU ticks, or `fallback` once it has gone (a database session that ended in the window). */
const ticksOr = (pid: number, fallback: number) => {
  try {
    return cpuTicksOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return fallback;
  }
};

/**
 * Reads every watched process's CPU time now; `finish()` gives each one's use since, one entry per
 * name (PostgreSQL's processes add up under `postgres`), and the whole machine's busy share.
 */
export function startCpuWindow(processes: Watched[]): { finish(): { cpu: CpuUse[]; machine: MachineUse } } {
  const started = process.hrtime.bigint();
  const before = processes.map((p) => ticksOr(p.pid, 0));
  const machineBefore = machineTicksOf(readFileSync('/proc/stat', 'utf8'));
  return {
    finish() {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const after = machineTicksOf(readFileSync('/proc/stat', 'utf8'));
      const [cores, busy] = [availableParallelism(), after.busy - machineBefore.busy];
      const machine = {
        percent: (busy / Math.max(1, after.total - machineBefore.total)) * cores * 100,
        cores,
        seconds: busy / CLOCK_TICKS,
      };
      const byName = new Map<string, number>();
      processes.forEach((p, i) => byName.set(p.name, (byName.get(p.name) ?? 0) + ticksOr(p.pid, before[i]!) - before[i]!));
      const cpu = [...byName].map(([name, ticks]) => ({
        name,
        percent: (ticks / CLOCK_TICKS / seconds) * 100,
        seconds: ticks / CLOCK_TICKS,
      }));
      return { cpu, machine };
    },
  };
}

/** Samples the summed resident size of `processes` every 250 ms; `stop()` gives the peak seen. */
export function watchPeakRss(processes: () => Watched[]): { stop(): number } {
  let peak = 0;
  const sample = () => {
    try {
      peak = Math.max(peak, sum(processes().map((p) => readRssBytes(p.pid))));
    } catch {
      /* a process between two readings: the next sample counts */
    }
  };
  sample();
  const timer = setInterval(sample, 250);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}
