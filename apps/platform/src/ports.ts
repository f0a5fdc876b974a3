import { createServer } from 'node:net';
import { StartError } from './start-error';
import type { PlatformConfig } from './config';

/** Every listener's port setting; the admin API always listens on loopback, the others on PLATFORM_BIND. */
export const LISTENER_PORTS = [
  'FACADE_PORT',
  'AUTH_PORT',
  'GATEWAY_PORT',
  'ACCOUNTS_PORT',
  'BANKING_PORT',
  'OMS_PORT',
  'FACADE_INTERNAL_PORT',
  'AUTH_INTERNAL_PORT',
  'GATEWAY_INTERNAL_PORT',
  'ACCOUNTS_INTERNAL_PORT',
  'BANKING_INTERNAL_PORT',
  'OMS_INTERNAL_PORT',
  'AUTH_ADMIN_PORT',
] as const satisfies ReadonlyArray<keyof PlatformConfig>;

/**
 * Refuses the start, in one line naming each taken port and the setting that moves it, before
 * anything else starts: otherwise every worker dies on EADDRINUSE with a stack trace, is restarted
 * with back-off, and the operator learns only that "workers keep dying" half a minute later.
 */
export async function refuseTakenPorts(config: PlatformConfig): Promise<void> {
  const taken: string[] = [];
  for (const name of LISTENER_PORTS) {
    const port = config[name];
    if (port === 0) continue; // any free port
    if (!(await portIsFree(port, name === 'AUTH_ADMIN_PORT' ? '127.0.0.1' : config.PLATFORM_BIND))) taken.push(`${port} (${name})`);
  }
  if (taken.length)
    throw new StartError(
      `${taken.length === 1 ? 'Port' : 'Ports'} ${taken.join(', ')} ${taken.length === 1 ? 'is' : 'are'} in use by another program ` +
        `(another copy of the platform?). Stop it, or start on another port, e.g. ${taken[0]!.split(' ')[1]!.slice(1, -1)}=<free port> npm start.`,
    );
}

/** Whether a listener could bind `port` on `host` now. */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer()
      .once('error', () => resolve(false))
      .once('listening', () => probe.close(() => resolve(true)));
    probe.listen(port, host);
  });
}
