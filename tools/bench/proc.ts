/** CPU time and resident size of processes, read from Linux's /proc: what each process of a target costs. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second, the unit of utime/stime in /proc/<pid>/stat (100 on every Linux this runs on). */
export const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * utime + stime (in ticks) from one /proc/<pid>/stat line. The command name sits in parentheses
 * and may itself hold spaces or parentheses, so the fields are counted from the last ")".
 */
export function cpuTicksOf(stat: string): number {
  const end = stat.lastIndexOf(')');
  if (end < 0) throw new Error(`not a /proc/<pid>/stat line: ${stat.slice(0, 80)}`);
  // After ")": field 3 (state) is index 0, so utime (field 14) is index 11 and stime (15) index 12.
  const fields = stat
    .slice(end + 2)
    .trim()
    .split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`no utime/stime in /proc/<pid>/stat: ${stat.slice(0, 80)}`);
  return utime + stime;
}

/** VmRSS in bytes from /proc/<pid>/status (its value is in kB). */
export function rssBytesOf(status: string): number {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!match) throw new Error('no VmRSS line in /proc/<pid>/status');
  return Number(match[1]) * 1024;
}

/** Share of one core a process used between two readings: 100 = one core busy the whole time. */
export const cpuPercent = (ticks: number, seconds: number, clockTicks = CLOCK_TICKS) =>
  seconds > 0 ? (ticks / clockTicks / seconds) * 100 : 0;

export const readCpuTicks = (pid: number) => cpuTicksOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
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
export interface Watched {
  name: string;
  pid: number;
}

export interface CpuUse {
  name: string;
  /** Share of one core during the window (100 = one full core). */
  percent: number;
  /** CPU-seconds spent during the window. */
  seconds: number;
}

/** Reads every watched process's CPU time now; `finish()` gives each one's use since. */
export function startCpuWindow(processes: Watched[]): { finish(): CpuUse[] } {
  const started = process.hrtime.bigint();
  const before = processes.map((p) => readCpuTicks(p.pid));
  return {
    finish() {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      return processes.map((p, i) => {
        const ticks = readCpuTicks(p.pid) - before[i]!;
        return { name: p.name, percent: cpuPercent(ticks, seconds), seconds: ticks / CLOCK_TICKS };
      });
    },
  };
}

/** Samples the summed resident size of `processes` every `everyMs`; `stop()` gives the peak seen. */
export function watchPeakRss(processes: () => Watched[], everyMs = 250): { stop(): number } {
  let peak = 0;
  const sample = () => {
    try {
      peak = Math.max(
        peak,
        processes().reduce((sum, p) => sum + readRssBytes(p.pid), 0),
      );
    } catch {
      /* a process between two readings: the next sample counts */
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}
