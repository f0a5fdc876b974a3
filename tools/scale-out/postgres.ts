/** A private PostgreSQL cluster (Debian's binaries) in a temporary directory: this run may crash it, nobody else uses it. */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The newest installed server's bin directory (/usr/lib/postgresql/<major>/bin). */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((d) => existsSync(join(root, d, 'bin', 'initdb'))) : [];
  if (!majors.length) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)');
  return join(root, majors.sort((a, b) => Number(b) - Number(a))[0]!, 'bin');
}

export class PrivatePostgres {
  private readonly bin = binDir();
  readonly dataDir: string;
  private readonly home: string;

  constructor(
    dir: string,
    readonly port: number,
    /** The cluster's directory under `dir`: two clusters (a primary and its standby) need two names. */
    name = 'postgres',
  ) {
    this.home = join(dir, name);
    this.dataDir = join(this.home, 'data');
  }

  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /**
   * initdb as the current user (postgres refuses to run as root: then as the postgres user).
   * Fast and throwaway by default: no durability, room for twelve apps' pools. `settings` are
   * appended to the server's configuration (a later line wins).
   */
  init(settings: string[] = ['synchronous_commit = off']): void {
    this.makeHome();
    this.run('initdb', ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    this.configure(settings);
  }

  /**
   * A standby of `primary` (pg_basebackup, streaming, standby.signal), known to the primary as
   * `applicationName` (what synchronous_standby_names lists). Start it with `start()`.
   */
  initStandbyOf(primary: PrivatePostgres, applicationName: string, settings: string[] = []): void {
    this.makeHome();
    this.run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      this.dataDir,
      '-X',
      'stream',
      '-R',
      '-c',
      'fast',
    ]);
    this.configure([
      `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=${applicationName}'`,
      ...settings,
    ]);
  }

  /** What the operator does when the primary is gone for good: this standby becomes the primary. */
  promote(): void {
    this.run('pg_ctl', ['-D', this.dataDir, '-w', '-t', '30', 'promote']);
  }

  /**
   * The node lost at once: kill -9 the postmaster and every process it started (no shutdown,
   * no checkpoint, no goodbye to the clients or the standby).
   */
  killNode(): void {
    const pidFile = join(this.dataDir, 'postmaster.pid');
    if (!existsSync(pidFile)) return;
    const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    const children = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          // The parent pid is the 4th field after the command, which is in parentheses.
          return Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]) === postmaster;
        } catch {
          return false;
        }
      })
      .map(Number);
    for (const pid of [postmaster, ...children])
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
  }

  private makeHome(): void {
    mkdirSync(this.home, { recursive: true });
    chmodSync(this.home, 0o700);
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres', this.home]);
  }

  private configure(settings: string[]): void {
    const conf = [
      "listen_addresses = '127.0.0.1'",
      `port = ${this.port}`,
      `unix_socket_directories = '${this.dataDir}'`,
      'fsync = off',
      'full_page_writes = off',
      'max_connections = 300',
      'shared_buffers = 64MB',
      ...settings,
    ];
    const file = join(this.dataDir, 'postgresql.auto.conf');
    const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
    writeFileSync(file, `${before}\n${conf.join('\n')}\n`);
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres', file]);
  }

  start(): void {
    this.run('pg_ctl', ['-D', this.dataDir, '-l', join(this.dataDir, 'server.log'), '-w', '-t', '30', 'start']);
  }

  /** A crash: every backend killed at once, no checkpoint (recovery on the next start). */
  crash(): void {
    this.run('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
  }

  stop(): void {
    if (existsSync(join(this.dataDir, 'postmaster.pid'))) this.run('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop'], true);
  }

  createDatabase(name: string): void {
    this.sql(`CREATE DATABASE "${name}"`);
  }

  /** One of the server's tools (psql, pg_ctl, …); its output. */
  run(tool: string, args: string[], quiet = false): string {
    const asRoot = process.getuid?.() === 0;
    const cmd = join(this.bin, tool);
    // As root: run the binaries as the postgres user (the server refuses root), who owns the data directory.
    const res = asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' })
      : spawnSync(cmd, args, { encoding: 'utf8' });
    if (res.status !== 0 && !quiet)
      throw new Error(`${tool} ${args.join(' ')} failed (${res.status}): ${(res.stderr || res.stdout || '').trim().slice(-600)}`);
    return res.stdout ?? '';
  }

  /** One SQL statement through psql: its rows, unaligned. */
  sql(statement: string, database = 'postgres'): string {
    return this.run('psql', [
      '-h',
      '127.0.0.1',
      '-p',
      String(this.port),
      '-U',
      'postgres',
      '-d',
      database,
      '-qAtX',
      '-c',
      statement,
    ]).trim();
  }
}
