import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { COMPOSE_FILE } from './compose-rules';
import { containers, podTemplate, type K8sObject } from './kustomize';
import { checkOverlay, copyProblems, overlayNames } from './overlays';
import type { JsonObject } from './strategic-merge';
import { externalSecrets, matches } from './validate';

const APPS = ['rest-facade', 'auth', 'gateway', 'accounts', 'banking', 'oms'];
const rendered = Object.fromEntries(overlayNames().map((name) => [name, checkOverlay(name)]));
const of = (overlay: string, kind: string) => rendered[overlay].objects.filter((o) => o.kind === kind);
const byName = (overlay: string, kind: string, name: string) => of(overlay, kind).find((o) => o.metadata.name === name)!;

describe('Kubernetes overlays', () => {
  it('has the dev and production overlays', () => {
    expect(overlayNames()).toEqual(['dev', 'production']);
  });

  it.each(overlayNames())('%s renders and validates: schemas, references, rules', (name) => {
    expect(rendered[name].problems).toEqual([]);
    expect(rendered[name].objects.length).toBeGreaterThan(40);
  });

  it.each(overlayNames())('%s runs every app from the one image, chosen by APP, in its own namespace', (name) => {
    const namespace = byName(name, 'Namespace', name === 'dev' ? 'trading-dev' : 'trading').metadata.name;
    for (const app of APPS) {
      const d = byName(name, 'Deployment', app);
      expect(d.metadata.namespace).toBe(namespace);
      const [c] = containers(d);
      expect(String(c['image'])).toMatch(/trading-api:/);
      expect((c['env'] as JsonObject[]).find((e) => e['name'] === 'APP')?.['value']).toBe(app);
    }
    expect(rendered[name].objects.filter((o) => o.kind !== 'Namespace').every((o) => o.metadata.namespace === namespace)).toBe(true);
  });

  it.each(overlayNames())('%s probes each app on its internal listener: /healthz for liveness, /readyz for readiness', (name) => {
    for (const app of APPS) {
      const [c] = containers(byName(name, 'Deployment', app));
      const internal = (c['ports'] as JsonObject[]).find((p) => p['name'] === 'internal')!;
      const publicPort = (c['ports'] as JsonObject[]).find((p) => p['name'] === 'public')!;
      expect(internal['containerPort']).toBe(Number(publicPort['containerPort']) + 100);
      expect(c['livenessProbe']).toMatchObject({ httpGet: { path: '/healthz', port: 'internal' } });
      expect(c['readinessProbe']).toMatchObject({ httpGet: { path: '/readyz', port: 'internal' } });
      const annotations = (podTemplate(byName(name, 'Deployment', app))!['metadata'] as JsonObject)['annotations'] as Record<
        string,
        string
      >;
      expect(annotations).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(internal['containerPort']) });
    }
  });

  it('commits no Secret: every key and password is referenced, never rendered', () => {
    for (const name of overlayNames()) expect(of(name, 'Secret')).toEqual([]);
    for (const app of APPS) {
      const env = containers(byName('production', 'Deployment', app))[0]['env'] as JsonObject[];
      for (const key of ['SERVICE_KEY', 'SERVICE_TRUSTED_KEYS', 'REDIS_URL'])
        expect(env.find((e) => e['name'] === key)).toHaveProperty('valueFrom.secretKeyRef');
    }
  });

  it('production autoscales every app from two replicas and leaves the count to the autoscaler; dev runs one of each', () => {
    const hpas = of('production', 'HorizontalPodAutoscaler');
    expect(hpas.map((h) => (h['spec'] as JsonObject)['scaleTargetRef']).map((r) => (r as JsonObject)['name'])).toEqual(
      expect.arrayContaining(APPS),
    );
    for (const h of hpas) expect((h['spec'] as JsonObject)['minReplicas']).toBeGreaterThanOrEqual(2);
    for (const app of APPS) {
      expect((byName('production', 'Deployment', app)['spec'] as JsonObject)['replicas']).toBeUndefined();
      expect(containers(byName('production', 'Deployment', app))[0]['resources']).toHaveProperty('limits.cpu');
    }
    expect(of('dev', 'HorizontalPodAutoscaler')).toEqual([]);
    expect(of('dev', 'StatefulSet').map((s) => s.metadata.name)).toEqual(['postgres', 'redis']);
    expect(of('production', 'StatefulSet')).toEqual([]);
  });

  it('documents how to create every external Secret (deploy/README.md)', () => {
    const readme = readFileSync(join(__dirname, '../../deploy/README.md'), 'utf8');
    for (const s of externalSecrets()) expect(readme).toMatch(new RegExp(`(^s|secret tls) ${s.name} `, 'm'));
  });

  it('the in-cluster Redis and PostgreSQL use the very files of tools/service-mode', () => {
    expect(copyProblems()).toEqual([]);
  });

  describe('network policies allow exactly the calls docker-compose.yml wires', () => {
    // Who calls whom, from the URLs in each service's environment (http://<service>:<port>).
    const compose = parse(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true }) as {
      services: Record<string, { environment?: Record<string, string> }>;
    };
    const calls = new Set<string>();
    for (const [from, s] of Object.entries(compose.services)) {
      for (const value of Object.values(s.environment ?? {})) {
        const m = /^https?:\/\/([a-z-]+):(\d+)/.exec(String(value));
        if (m && APPS.includes(from) && APPS.includes(m[1])) calls.add(`${from} -> ${m[1]}:${m[2]}`);
      }
    }

    it.each(overlayNames())('%s', (name) => {
      const policies = of(name, 'NetworkPolicy');
      const labels = (app: string) =>
        (podTemplate(byName(name, 'Deployment', app))!['metadata'] as JsonObject)['labels'] as Record<string, string>;
      const ports = (app: string) =>
        (containers(byName(name, 'Deployment', app))[0]['ports'] as JsonObject[]).map((p) => Number(p['containerPort']));
      const allowed = (direction: 'ingress' | 'egress', self: string, peer: string, port: number) =>
        policies.some((p: K8sObject) => {
          const spec = p['spec'] as JsonObject;
          if (!matches(spec['podSelector'] as never, labels(self))) return false;
          return ((spec[direction] as JsonObject[]) ?? []).some((rule) => {
            const peers = (rule[direction === 'ingress' ? 'from' : 'to'] as JsonObject[]) ?? [];
            const portOk = !rule['ports'] || (rule['ports'] as JsonObject[]).some((x) => x['port'] === port);
            return (
              portOk && peers.some((x) => !x['namespaceSelector'] && x['podSelector'] && matches(x['podSelector'] as never, labels(peer)))
            );
          });
        });
      const open = new Set<string>();
      for (const from of APPS)
        for (const to of APPS)
          for (const port of ports(to))
            if (allowed('ingress', to, from, port) && allowed('egress', from, to, port)) open.add(`${from} -> ${to}:${port}`);
      expect([...open].sort()).toEqual([...calls].sort());
      expect(calls.size).toBeGreaterThanOrEqual(12);
    });
  });

  it('lets only the facade, auth and the gateway be reached from the ingress controllers, and scrapes only internal listeners', () => {
    const fromNamespace = (ns: string) =>
      of('production', 'NetworkPolicy').flatMap((p) =>
        (((p['spec'] as JsonObject)['ingress'] as JsonObject[]) ?? [])
          .filter((rule) => (rule['from'] as JsonObject[]).some((f) => JSON.stringify(f['namespaceSelector'] ?? {}).includes(ns)))
          .flatMap((rule) => (rule['ports'] as JsonObject[]).map((x) => x['port'])),
      );
    expect(fromNamespace('ingress-nginx').sort()).toEqual([4000, 8080, 8081]);
    expect(fromNamespace('monitoring').sort()).toEqual([4100, 4101, 4102, 4103, 8180, 8181]);
  });
});
