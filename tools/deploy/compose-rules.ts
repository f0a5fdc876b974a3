/**
 * What makes docker-compose.yml scale (`docker compose up --scale accounts=2 --scale gateway=2`):
 * no container has a fixed name or address, services find each other by name (the compose DNS
 * answers with every replica), a scaled service publishes no single fixed host port (the second
 * replica could not bind it), trusted proxies are networks, and Redis demands a user and password.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { STOP_DEADLINE_MS } from '@trading/config';

export const COMPOSE_FILE = join(__dirname, '../../docker-compose.yml');

/**
 * Scaled by design: the gateway and the subgraphs. The facade and auth are published at the one
 * host address the issuer and {base_url} name (8080, 8081); more of them go behind a load
 * balancer, as in Kubernetes.
 */
export const SCALED_SERVICES = ['gateway', 'accounts', 'banking', 'oms'];

type Service = {
  container_name?: string;
  ports?: Array<string | { published?: string | number; target: number; host_ip?: string }>;
  networks?: Record<string, { ipv4_address?: string; ipv6_address?: string } | null> | string[];
  links?: string[];
  network_mode?: string;
  environment?: Record<string, string> | string[];
  command?: string[] | string;
  build?: unknown;
  stop_grace_period?: string;
};

/** Compose's duration (`25s`, `1m30s`, `500ms`) in seconds; NaN when it is none. */
const seconds = (duration: string) => {
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== duration) return NaN;
  const unit = { ms: 0.001, s: 1, m: 60, h: 3600 } as const;
  return parts.reduce((total, p) => total + Number(p[1]) * unit[p[2] as keyof typeof unit], 0);
};

/** A value as compose would see it with no variables set: `${X:-default}` → default, `${X:?msg}` / `${X}` → a placeholder. */
const withDefaults = (value: string) => value.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1').replace(/\$\{[A-Z0-9_]+(:?\?[^}]*)?\}/g, 'VALUE');

export function composeProblems(text = readFileSync(COMPOSE_FILE, 'utf8')): string[] {
  const doc = parse(text, { merge: true }) as { services: Record<string, Service> };
  const names = Object.keys(doc.services);
  const problems = Object.entries(doc.services).flatMap(([name, s]) => serviceProblems(name, s, names));
  const redis = doc.services['redis'];
  if (!redis || !JSON.stringify(redis.command ?? '').includes('redis-users.sh'))
    problems.push('services.redis: must start with the ACL users of tools/service-mode/redis-users.sh (default user off)');
  return problems;
}

/** One service's problems; `names` are every service's, which its URLs may name. */
function serviceProblems(name: string, s: Service, names: string[]): string[] {
  const at = `services.${name}`;
  const problems = pinningProblems(at, s);
  // The apps exit on their own within STOP_DEADLINE_MS of SIGTERM; compose's SIGKILL (10 s by default) must come after.
  const grace = seconds(s.stop_grace_period ?? '10s');
  if (s.build && !(grace >= STOP_DEADLINE_MS / 1000 + 2))
    problems.push(
      `${at}: stop_grace_period ${s.stop_grace_period ?? '10s (the default)'} is under the apps' stop deadline (${STOP_DEADLINE_MS / 1000} s) + 2 s: SIGKILL would cut a clean stop`,
    );
  if (SCALED_SERVICES.includes(name)) problems.push(...fixedPortProblems(at, s));
  const env = Array.isArray(s.environment)
    ? Object.fromEntries(s.environment.map((e) => [e.split('=')[0], e.split('=').slice(1).join('=')]))
    : (s.environment ?? {});
  for (const [key, raw] of Object.entries(env)) problems.push(...envProblems(at, key, withDefaults(String(raw)), names));
  return problems;
}

/** What ties a service to one container: a fixed name, links, the host's network, a fixed address. */
function pinningProblems(at: string, s: Service): string[] {
  const problems: string[] = [];
  if (s.container_name) problems.push(`${at}: container_name fixes the container's name, so it cannot scale`);
  if (s.links) problems.push(`${at}: links pin one container; services find each other by name`);
  if (s.network_mode === 'host') problems.push(`${at}: network_mode host shares the host's ports, so it cannot scale`);
  for (const [net, opts] of Object.entries(Array.isArray(s.networks) ? {} : (s.networks ?? {}))) {
    if (opts?.ipv4_address || opts?.ipv6_address) problems.push(`${at}: a fixed address on network ${net}`);
  }
  return problems;
}

/** A scaled service's published host ports: a fixed one would stop the second replica. */
function fixedPortProblems(at: string, s: Service): string[] {
  const problems: string[] = [];
  for (const port of s.ports ?? []) {
    const published = typeof port === 'string' ? withDefaults(port).split(':').slice(0, -1).pop() : port.published?.toString();
    if (published && !/^\d+-\d+$/.test(published))
      problems.push(`${at}: publishes the fixed host port ${published}; a second replica could not bind it (publish a range, or nothing)`);
  }
  return problems;
}

/** An environment variable's trusted proxies and the URLs in its value (`value` with compose's defaults applied). */
function envProblems(at: string, key: string, value: string, names: string[]): string[] {
  const problems: string[] = [];
  if (key.endsWith('_TRUST_PROXY') && value) {
    for (const item of value.split(',').map((v) => v.trim())) {
      if (!/\/\d+$/.test(item) && item !== 'loopback' && item !== 'uniquelocal' && item !== 'linklocal') {
        problems.push(`${at}: ${key} names ${item}; trust a network (CIDR), never one container's address`);
      }
    }
  }
  for (const url of value.match(/\b(?:https?|redis|rediss|postgres|postgresql):\/\/[^\s"']+/g) ?? []) {
    const host = new URL(url).hostname;
    if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) problems.push(`${at}: ${key} reaches ${host} by address; use the service's name`);
    else if (host !== 'localhost' && !names.includes(host)) problems.push(`${at}: ${key} names ${host}, which is no service here`);
    if (/^rediss?:/.test(url) && !/^rediss?:\/\/[^:@/]+:[^@/]+@/.test(url))
      problems.push(`${at}: ${key} reaches Redis without a user and password`);
  }
  return problems;
}
