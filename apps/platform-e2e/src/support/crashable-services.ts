import { Client } from 'pg';
import type { AccountsApp } from '@trading/accounts-service';
import type { BankingApp } from '@trading/banking-service';
import type { ConsumerOptions } from '@trading/events';
import { listenService, type RunningService, type ServiceApp, type ServicePlan } from '@trading/service';
import type { SettlementService, SettlementServiceSpec, StartSettlementService } from '@trading/platform';

/**
 * A settlement service that can be killed and started again in process, for crash tests: a
 * new instance gets the same configuration (database, settlement stream and consumer group)
 * and listens on the same port, so the apps that call it need no change.
 */
export interface CrashableService<A extends BankingApp | AccountsApp> extends SettlementService<A> {
  readonly group: string;
  /**
   * Kills the running instance as abruptly as can be done in process: its port stops answering
   * (open connections cut), its settlement consumer stops at once and acks nothing more, and
   * every other session on its database is terminated, so a transaction in flight rolls back
   * and the event it was applying stays pending. Then what is left of it is released.
   */
  crash(): Promise<void>;
  /** Starts a new instance; by default under the dead one's consumer name, so it reads its pending entries first. */
  restart(consumer?: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs'>): Promise<void>;
  /** Starts a second instance beside the running one (same database, stream and group; no listener), as a second pod would run. */
  another(consumer: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs'>): Promise<A>;
}

/** Starts accounts and banking so that tests can crash and restart them; keeps each one it started, by group. */
export function crashableServices(): {
  start: StartSettlementService;
  started: { accounts?: CrashableService<AccountsApp>; banking?: CrashableService<BankingApp> };
} {
  const started: { accounts?: CrashableService<AccountsApp>; banking?: CrashableService<BankingApp> } = {};
  const start = async <A extends BankingApp | AccountsApp>(spec: SettlementServiceSpec<A>): Promise<CrashableService<A>> => {
    let current: { app: A; server: RunningService } | undefined;
    const run = async (where: ServicePlan['listen'], consumer?: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs'>, again = false) => {
      const app = await spec.create(consumer);
      try {
        current = { app, server: again ? await listenAgain(app, where) : await listenService(app, where) };
      } catch (err) {
        await app.close();
        throw err;
      }
      return current.server;
    };
    const first = await run(spec.listen);
    const service: CrashableService<A> = {
      get app() {
        return current?.app;
      },
      server: first,
      group: spec.group,
      close: async () => {
        const running = current;
        current = undefined;
        if (running) {
          await running.server.close();
          await running.app.close();
        }
      },
      crash: async () => {
        const dead = current;
        if (!dead) throw new Error(`${spec.group} is not running`);
        current = undefined;
        const servers = [dead.server.public.server, dead.server.internal.server];
        const closed = Promise.all(servers.map((s) => new Promise<void>((done) => s.close(() => done()))));
        for (const s of servers) s.closeAllConnections();
        dead.app.settlementConsumer.abort();
        try {
          await terminateSessions(spec.databaseUrl);
        } finally {
          await dead.app.close().catch(() => undefined); // what is left of a crashed instance may fail to close
          await closed;
        }
      },
      another: (consumer) => spec.create(consumer),
      restart: async (consumer) => {
        if (current) throw new Error(`${spec.group} is running`);
        const same = {
          public: { ...spec.listen.public, port: first.public.port },
          internal: { ...spec.listen.internal, port: first.internal.port },
        };
        await run(same, consumer, true);
      },
    };
    (started as Record<string, CrashableService<BankingApp | AccountsApp>>)[spec.group] = service as never;
    return service;
  };
  return { start: start as StartSettlementService, started };
}

/** Listens again on the ports a crashed instance gave up, which may take a moment to be free. */
async function listenAgain(service: ServiceApp, addresses: ServicePlan['listen']): Promise<RunningService> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await listenService(service, addresses);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Cuts every session on the database at `url` but this one (what a killed process leaves PostgreSQL to do). */
async function terminateSessions(url: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
  } finally {
    await client.end();
  }
}
