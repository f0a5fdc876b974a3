import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { COMPOSE_FILE } from './compose-rules';
import { containers, podTemplate, type JsonObject, type K8sObject } from './kustomize';
import { checkOverlay, linkProblems, overlayNames } from './overlays';

import { externalSecrets, ingressControllers, matches } from './validate';

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

  it("the gateway's GraphQL explorer and introspection: off in production, on in dev (platform-settings)", () => {
    const settings = (overlay: string) =>
      of(overlay, 'ConfigMap').find((o) => o.metadata.name.startsWith('platform-settings'))!['data'] as Record<string, string>;
    expect(settings('production')).toMatchObject({ GATEWAY_EXPLORER: 'false', GRAPHQL_INTROSPECTION: 'false' });
    expect(settings('dev')).toMatchObject({ GATEWAY_EXPLORER: 'true', GRAPHQL_INTROSPECTION: 'true' });
    const env = containers(byName('production', 'Deployment', 'gateway'))[0]['env'] as JsonObject[];
    expect(env.find((e) => e['name'] === 'GATEWAY_EXPLORER')).toHaveProperty('valueFrom.configMapKeyRef.key', 'GATEWAY_EXPLORER');
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
    expect(of('dev', 'StatefulSet').map((s) => s.metadata.name)).toEqual(['redis']);
    expect(of('production', 'StatefulSet')).toEqual([]);
  });

  it('documents how to create every external Secret (deploy/README.md)', () => {
    const readme = readFileSync(join(__dirname, '../../deploy/README.md'), 'utf8');
    for (const s of externalSecrets()) expect(readme).toMatch(new RegExp(`(^s|secret tls) ${s.name} `, 'm'));
  });

  it('the in-cluster Redis uses the very file tools/service-mode runs (a link), and a copy or a link elsewhere is refused', () => {
    expect(linkProblems()).toEqual([]);
    const root = mkdtempSync(join(tmpdir(), 'links-'));
    try {
      mkdirSync(join(root, 'deploy'));
      mkdirSync(join(root, 'tools'));
      writeFileSync(join(root, 'deploy/a.sh'), 'echo a\n');
      writeFileSync(join(root, 'deploy/b.sh'), 'echo a\n');
      const links = [{ link: 'tools/a.sh', target: 'deploy/a.sh' }];
      const problem = ['tools/a.sh must be a symbolic link to deploy/a.sh: ln -sf ../deploy/a.sh tools/a.sh'];
      expect(linkProblems(links, root)).toEqual(problem); // missing
      copyFileSync(join(root, 'deploy/a.sh'), join(root, 'tools/a.sh'));
      expect(linkProblems(links, root)).toEqual(problem); // a copy, identical today
      rmSync(join(root, 'tools/a.sh'));
      symlinkSync('../deploy/b.sh', join(root, 'tools/a.sh'));
      expect(linkProblems(links, root)).toEqual(problem); // a link to another file
      rmSync(join(root, 'tools/a.sh'));
      symlinkSync('../deploy/a.sh', join(root, 'tools/a.sh'));
      expect(linkProblems(links, root)).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  describe('the in-cluster PostgreSQL (dev): a CloudNativePG Cluster with a synchronous standby', () => {
    const DATA_OWNERS = ['auth', 'accounts', 'banking', 'oms'];

    it('runs three instances; a commit waits for one standby, and waits rather than go without (dataDurability required)', () => {
      const cluster = byName('dev', 'Cluster', 'postgres');
      expect(cluster.apiVersion).toBe('postgresql.cnpg.io/v1');
      expect(cluster['spec']).toMatchObject({
        instances: 3,
        postgresql: { synchronous: { method: 'any', number: 1, dataDurability: 'required', failoverQuorum: true } },
      });
      expect(of('production', 'Cluster')).toEqual([]);
    });

    it("creates the databases docker-compose's PostgreSQL gets (tools/service-mode/init-databases.sql), each owned by its service's role", () => {
      const sql = readFileSync(join(__dirname, '../service-mode/init-databases.sql'), 'utf8');
      const created = [...sql.matchAll(/^CREATE DATABASE (\w+);/gm)].map((m) => m[1]).sort();
      expect(created).toEqual([...DATA_OWNERS].sort());
      const databases = of('dev', 'Database').map((d) => d['spec'] as JsonObject);
      expect(databases.map((d) => [d['name'], d['owner'], (d['cluster'] as JsonObject)['name']]).sort()).toEqual(
        created.map((name) => [name, name, 'postgres']),
      );
    });

    it("points every service that owns data at the Cluster's read-write Service, as its own role, with the role's password", () => {
      for (const app of DATA_OWNERS) {
        const env = containers(byName('dev', 'Deployment', app))[0]['env'] as JsonObject[];
        const name = `${app.toUpperCase()}_DATABASE`;
        const password = env.findIndex((e) => e['name'] === `${name}_PASSWORD`);
        const url = env.findIndex((e) => e['name'] === `${name}_URL`);
        expect(env[url]).toEqual({ name: `${name}_URL`, value: `postgres://${app}:$(${name}_PASSWORD)@postgres-rw:5432/${app}` });
        expect(env[password]).toEqual({
          name: `${name}_PASSWORD`,
          valueFrom: { secretKeyRef: { name: `postgres-${app}`, key: 'password' } },
        });
        expect(password).toBeLessThan(url); // expanded only from variables defined before it
        // Production reads the URL of its external server from the service's Secret.
        const production = containers(byName('production', 'Deployment', app))[0]['env'] as JsonObject[];
        expect(production.find((e) => e['name'] === `${name}_URL`)).toHaveProperty('valueFrom.secretKeyRef.key', `${name}_URL`);
      }
    });
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

  // What a policy of `overlay` lets in (ingress) or out (egress), to or from pods of another namespace: `app:port`.
  const crossNamespace = (overlay: string, direction: 'ingress' | 'egress', namespace: string, podLabels: Record<string, string>) =>
    APPS.flatMap((app) => {
      const labels = (podTemplate(byName(overlay, 'Deployment', app))!['metadata'] as JsonObject)['labels'] as Record<string, string>;
      return of(overlay, 'NetworkPolicy')
        .filter((p) => matches((p['spec'] as JsonObject)['podSelector'] as never, labels))
        .flatMap((p) => ((p['spec'] as JsonObject)[direction] as JsonObject[]) ?? [])
        .filter((rule) =>
          ((rule[direction === 'ingress' ? 'from' : 'to'] as JsonObject[]) ?? []).some(
            (peer) =>
              matches(peer['namespaceSelector'] as never, { 'kubernetes.io/metadata.name': namespace }) &&
              matches(peer['podSelector'] as never, podLabels),
          ),
        )
        .flatMap((rule) => (rule['ports'] as JsonObject[]).map((x) => `${app}:${String(x['port'])}`));
    }).sort();

  it.each([
    // The public controller: the facade and auth's pages; the internal one: the gateway's public listener.
    ['production', { nginx: ['auth:8081', 'rest-facade:8080'], 'nginx-internal': ['gateway:4000'] }],
    // One class for both Ingresses in dev: the public controller serves the gateway too, the internal one nothing.
    ['dev', { nginx: ['auth:8081', 'gateway:4000', 'rest-facade:8080'], 'nginx-internal': [] }],
  ])('%s admits each ingress controller to its own backends only, by its pods, never its whole namespace', (name, expected) => {
    const reach = Object.fromEntries(ingressControllers().map((c) => [c.class, crossNamespace(name, 'ingress', c.namespace, c.podLabels)]));
    expect(reach).toEqual(expected);
    // The namespace alone (any other pod there, or a controller without its release label) reaches nothing.
    expect(crossNamespace(name, 'ingress', 'ingress-nginx', {})).toEqual([]);
    expect(crossNamespace(name, 'ingress', 'ingress-nginx', { 'app.kubernetes.io/name': 'ingress-nginx' })).toEqual([]);
  });

  it('scrapes only internal listeners, from Prometheus', () => {
    const scraped = crossNamespace('production', 'ingress', 'monitoring', { 'app.kubernetes.io/name': 'prometheus' });
    expect(scraped).toEqual(['accounts:4101', 'auth:8181', 'banking:4102', 'gateway:4100', 'oms:4103', 'rest-facade:8180']);
  });

  it("names the ingress controllers' releases in deploy/README.md", () => {
    const readme = readFileSync(join(__dirname, '../../deploy/README.md'), 'utf8');
    for (const c of ingressControllers()) expect(readme).toContain(`release \`${c.podLabels['app.kubernetes.io/instance']}\``);
  });

  it.each(overlayNames())(
    '%s lets every app reach the OpenTelemetry collector (OTLP 4317, 4318), with tracing off until an endpoint is set',
    (name) => {
      const collector = crossNamespace(name, 'egress', 'observability', { 'app.kubernetes.io/name': 'opentelemetry-collector' });
      expect(collector).toEqual(APPS.flatMap((app) => [`${app}:4317`, `${app}:4318`]).sort());
      const settings = of(name, 'ConfigMap').find((c) => c.metadata.name.startsWith('platform-settings-'))!;
      expect(Object.keys(settings['data'] as object)).not.toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
      for (const app of APPS) {
        const env = containers(byName(name, 'Deployment', app))[0]['env'] as JsonObject[];
        for (const key of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG'])
          expect(env.find((e) => e['name'] === key)).toEqual({
            name: key,
            valueFrom: { configMapKeyRef: { name: settings.metadata.name, key, optional: true } },
          });
      }
    },
  );
});
