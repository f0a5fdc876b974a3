import { spawn } from 'node:child_process';
import { join } from 'node:path';
import express from 'express';
import { listen, listenService, type ServiceApp } from './index';

/** An app whose /who says which listener answered. */
function named(name: string) {
  const app = express();
  app.get('/who', (_req, res) => void res.send(name));
  return app;
}

const answer = async (url: string) => (await fetch(url)).text();

/** A port nothing listens on now: taken from the system and given back. */
async function freePort() {
  const probe = await listen(express(), 0);
  await probe.close();
  return probe.port;
}

const at = (port: number) => ({ port, host: '127.0.0.1' });

describe('listen', () => {
  it('listens on a free port when asked for port 0, answers at its URL, and close() stops it', async () => {
    const running = await listen(named('public'), 0);
    expect(running.port).toBeGreaterThan(0);
    expect(running.url).toBe(`http://127.0.0.1:${running.port}`);
    expect(await answer(`${running.url}/who`)).toBe('public');
    // Longer than the proxies' idle timeouts, so a proxy never reuses a connection the server just dropped.
    expect(running.server.keepAliveTimeout).toBe(65_000);
    await running.close();
    await expect(fetch(`${running.url}/who`)).rejects.toThrow();
  });

  it('gives a URL that answers when bound to every address', async () => {
    const running = await listen(named('public'), 0, '0.0.0.0');
    try {
      expect(running.url).toBe(`http://127.0.0.1:${running.port}`);
      expect(await answer(`${running.url}/who`)).toBe('public');
    } finally {
      await running.close();
    }
  });

  it('lets a request in flight finish, and close() still ends within its backstop', async () => {
    let arrived!: () => void;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    const app = express();
    app.get('/slow', (_req, res) => {
      arrived();
      setTimeout(() => res.send('finished'), 200);
    });
    const running = await listen(app, 0);
    const reply = fetch(`${running.url}/slow`).then((res) => res.text());
    await inFlight;
    const started = Date.now();
    await running.close();
    expect(await reply).toBe('finished');
    // Its connection stays open after the answer (keep-alive) until the 2 s backstop closes it, not the 65 s idle timeout.
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('fails when the port is taken', async () => {
    const taken = await listen(named('first'), 0);
    try {
      await expect(listen(named('second'), taken.port)).rejects.toMatchObject({ code: 'EADDRINUSE' });
      expect(await answer(`${taken.url}/who`)).toBe('first');
    } finally {
      await taken.close();
    }
  });
});

describe('listenService', () => {
  const service = (admin?: boolean): ServiceApp => ({
    name: 'svc',
    app: named('public'),
    internal: named('internal'),
    admin: admin ? named('admin') : undefined,
    close: async () => undefined,
  });

  it('starts the public and internal listeners, each serving its own app, and close() stops both', async () => {
    const running = await listenService(service(), { public: at(0), internal: at(0) });
    expect(await answer(`${running.public.url}/who`)).toBe('public');
    expect(await answer(`${running.internal.url}/who`)).toBe('internal');
    expect(running.admin).toBeUndefined();
    await running.close();
    await expect(fetch(`${running.public.url}/who`)).rejects.toThrow();
    await expect(fetch(`${running.internal.url}/who`)).rejects.toThrow();
  });

  it('starts the admin listener of a service that has one', async () => {
    const running = await listenService(service(true), { public: at(0), internal: at(0), admin: at(0) });
    expect(await answer(`${running.admin!.url}/who`)).toBe('admin');
    await running.close();
    await expect(fetch(`${running.admin!.url}/who`)).rejects.toThrow();
  });

  it('refuses an admin API without an admin listener, and closes what it had opened', async () => {
    const [publicPort, internalPort] = [await freePort(), await freePort()];
    await expect(listenService(service(true), { public: at(publicPort), internal: at(internalPort) })).rejects.toThrow(
      'svc has an admin API but no admin listener was configured',
    );
    await expect(fetch(`http://127.0.0.1:${publicPort}/who`)).rejects.toThrow();
    await expect(fetch(`http://127.0.0.1:${internalPort}/who`)).rejects.toThrow();
  });

  it('closes the public listener when the internal one cannot listen', async () => {
    const taken = await listen(named('other'), 0);
    const publicPort = await freePort();
    try {
      await expect(listenService(service(), { public: at(publicPort), internal: at(taken.port) })).rejects.toMatchObject({
        code: 'EADDRINUSE',
      });
      await expect(fetch(`http://127.0.0.1:${publicPort}/who`)).rejects.toThrow();
    } finally {
      await taken.close();
    }
  });
});

/**
 * runService ends the process (exit 0 on a signal, 1 when it cannot start): it runs in a child,
 * with the plan given as JavaScript, so the exit codes and output are real.
 */
function runChild(plan: string) {
  const script = `
    const express = require('express');
    const { ConfigError } = require('@trading/config');
    const { runService } = require(${JSON.stringify(join(__dirname, 'server.ts'))});
    runService('probe', () => { ${plan} });
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: join(__dirname, '../../..'), stdio: 'pipe' });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

describe('runService', () => {
  it('listens, and on SIGTERM drains, releases the service and exits 0', async () => {
    const run = runChild(`
      return {
        listen: { public: { port: 0, host: '127.0.0.1' }, internal: { port: 0, host: '127.0.0.1' } },
        logLevel: 'info',
        create: async () => {
          const app = express();
          app.get('/who', (_req, res) => res.send('probe'));
          return { name: 'probe', app, internal: express(), close: async () => console.log('service released') };
        },
      };
    `);
    try {
      // The port is only known from the start-up line (logs are flushed every 250 ms).
      let port: number | undefined;
      for (let i = 0; i < 200 && port === undefined && run.child.exitCode === null; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const started = /"port":(\d+),.*"msg":"probe listening"/.exec(run.output());
        if (started) port = Number(started[1]);
      }
      expect(port).toBeDefined();
      expect(await answer(`http://127.0.0.1:${port}/who`)).toBe('probe');
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      expect(run.output()).toContain('"signal":"SIGTERM","msg":"probe shutting down"');
      expect(run.output()).toContain('service released');
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  });

  /** Starts a probe whose close() does `close`, SIGTERMs it once it listens, and answers its exit code and output. */
  const stopProbe = async (close: string, stopDeadlineMs: number) => {
    const run = runChild(`
      return {
        listen: { public: { port: 0, host: '127.0.0.1' }, internal: { port: 0, host: '127.0.0.1' } },
        logLevel: 'info',
        stopDeadlineMs: ${stopDeadlineMs},
        create: async () => ({ name: 'probe', app: express(), internal: express(), close: async () => { ${close} } }),
      };
    `);
    try {
      for (let i = 0; i < 200 && !run.output().includes('probe listening') && run.child.exitCode === null; i++)
        await new Promise((r) => setTimeout(r, 50));
      const started = Date.now();
      run.child.kill('SIGTERM');
      const code = await run.exited;
      return { code, ms: Date.now() - started, output: run.output() };
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  };

  it('exits 1 at its stop deadline when releasing the service never finishes, saying so', async () => {
    const stopped = await stopProbe('await new Promise(() => setInterval(() => undefined, 1000));', 1500);
    expect(stopped.code).toBe(1);
    expect(stopped.ms).toBeGreaterThanOrEqual(1400);
    expect(stopped.output).toMatch(/"deadlineMs":1500,.*"msg":"probe did not stop within its deadline; exiting anyway"/);
  });

  it('exits 1 when releasing the service fails, naming the failure', async () => {
    const stopped = await stopProbe("throw new Error('pool would not end');", 10_000);
    expect(stopped.code).toBe(1);
    expect(stopped.output).toMatch(/"level":50,.*pool would not end.*"msg":"probe failed to release everything while stopping"/);
  });

  it('prints a configuration error as its readable list and exits 1', async () => {
    const run = runChild(`throw new ConfigError('probe', ['PROBE_PORT must be a port number']);`);
    expect(await run.exited).toBe(1);
    // The list alone, no stack trace: whoever deploys reads it.
    expect(run.output().trim()).toBe('probe: invalid configuration\n  - PROBE_PORT must be a port number');
  });

  it('logs a failure to start as fatal and exits 1', async () => {
    const taken = await listen(named('other'), 0);
    try {
      const run = runChild(`
        return {
          listen: { public: { port: ${taken.port}, host: '127.0.0.1' }, internal: { port: 0, host: '127.0.0.1' } },
          logLevel: 'info',
          create: async () => ({ name: 'probe', app: express(), internal: express(), close: async () => undefined }),
        };
      `);
      expect(await run.exited).toBe(1);
      expect(run.output()).toMatch(/"level":60,.*"code":"EADDRINUSE".*"msg":"probe failed to start"/);
    } finally {
      await taken.close();
    }
  });
});
