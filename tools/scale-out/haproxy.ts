/**
 * HAProxy (Debian's package) in front of each pair of instances: a frontend per app and
 * listener, round robin, each server health-checked on its internal /readyz. Its admin socket
 * tells which servers it sees up.
 */
import { HaProxyProcess, haproxyHttpDefaults } from '@trading/testing/haproxy';
import { waitFor } from './processes';
import { APPS, type AppName, type Instance, type Services } from './services';

export const backendName = (app: AppName, listener: 'public' | 'internal') => `${app.replace('-', '_')}_${listener}`;

/** `extra`: sections appended as they are (a TCP frontend for the database, say). */
function haproxyConfig(services: Services, socket: string, extra: string[] = []): string {
  const lines = haproxyHttpDefaults(socket);
  for (const app of APPS) {
    for (const listener of ['public', 'internal'] as const) {
      const name = backendName(app, listener);
      const port = listener === 'public' ? services.ports.lbPublic(app) : services.ports.lbInternal(app);
      lines.push(`frontend ${name}`, `  bind 127.0.0.1:${port}`);
      // As the deployment's Ingress does: {base_url}/oauth/* straight to auth, which answers the
      // API's spelling itself, so no facade hop sits on the token path.
      if (app === 'rest-facade' && listener === 'public')
        lines.push('  acl oauth path_beg /v1/oauth/', `  use_backend ${backendName('auth', 'public')} if oauth`);
      lines.push(`  default_backend ${name}`, '');
      lines.push(
        `backend ${name}`,
        '  balance roundrobin',
        '  option httpchk GET /readyz',
        '  http-check expect status 200',
        // Only a request that is safe to send twice is retried after it may have reached a server.
        '  http-request disable-l7-retry unless METH_GET || METH_HEAD',
      );
      // The apps at the edge learn the client's address from X-Forwarded-For (they trust the loopback proxy).
      if ((app === 'rest-facade' || app === 'auth') && listener === 'public') lines.push('  option forwardfor');
      for (const x of services.of(app)) {
        const p = listener === 'public' ? services.ports.public(app, x.index) : services.ports.internal(app, x.index);
        lines.push(`  server ${x.name} 127.0.0.1:${p} check port ${services.ports.internal(app, x.index)}`);
      }
      lines.push('');
    }
  }
  return [...lines, ...extra].join('\n');
}

/** HAProxy in front of the scale-out's instances, and what the runs ask it about them. */
export class HaProxy extends HaProxyProcess {
  /** In front of each pair of the services' instances; `extra` sections appended (a TCP frontend for the database, say). */
  static forServices(dir: string, services: Services, extra: string[] = []): HaProxy {
    return new HaProxy(dir, (socket) => haproxyConfig(services, socket, extra));
  }

  /** How many 2xx answers the app's public backend has passed on so far. */
  async answered2xx(app: AppName): Promise<number> {
    return Number((await this.stat('hrsp_2xx')).get(`${backendName(app, 'public')}/BACKEND`) ?? 0);
  }

  /** Waits until both of the instance's servers (public and internal backends) are UP. */
  async waitUp(x: Instance, timeoutMs = 20_000): Promise<void> {
    await waitFor(`HAProxy to see ${x.name} up`, timeoutMs, async () => {
      const s = await this.statuses();
      return (['public', 'internal'] as const).every((l) => s.get(`${backendName(x.app, l)}/${x.name}`) === 'UP');
    });
  }
}
