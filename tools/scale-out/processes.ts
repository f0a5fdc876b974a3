/** Small process and polling helpers for the scale-out run. */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` every 200 ms until it is true; throws naming `what` after `timeoutMs`. */
export async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** Resolves with the exit code (or signal) once the child is gone; undefined if it is still running after `timeoutMs`. */
export function exited(child: ChildProcess, timeoutMs: number): Promise<number | string | undefined> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode ?? undefined);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(undefined);
    }, timeoutMs);
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      resolve(code ?? signal ?? undefined);
    };
    child.once('exit', onExit);
  });
}

/** SIGTERM, then the exit code and how long it took; undefined code = still running after `graceMs` (then SIGKILL). */
export async function terminateWithin(child: ChildProcess, graceMs: number): Promise<{ code: number | string | undefined; ms: number }> {
  const started = Date.now();
  child.kill('SIGTERM');
  const code = await exited(child, graceMs);
  const ms = Date.now() - started;
  if (code === undefined) {
    child.kill('SIGKILL');
    await exited(child, 5000);
  }
  return { code, ms };
}

/** True when nothing listens on the port (any address). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

/** GET a URL, answering the status (0 when nothing answered). */
export async function statusOf(url: string, timeoutMs = 2000): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}
