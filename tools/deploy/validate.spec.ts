import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containers, overlayDir, podSpec, renderKustomization, type JsonObject, type K8sObject } from './kustomize';

import { externalSecrets, validateObjects } from './validate';

/** A fresh copy of the production overlay's objects, to break one thing at a time. */
const production = () => renderKustomization(overlayDir('production'));
const find = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)!;
const problemsOf = (objects: K8sObject[]) => validateObjects(objects, externalSecrets('production'));
const spec = (o: K8sObject) => o['spec'] as JsonObject;

describe('the validator bites', () => {
  it('accepts the production overlay as it is', () => {
    expect(problemsOf(production())).toEqual([]);
  });

  it('refuses a wrong type and an unknown field (the schema)', () => {
    const objects = production();
    spec(find(objects, 'Deployment', 'oms'))['replicas'] = 'two';
    expect(problemsOf(objects)).toContain('Deployment/oms: /spec/replicas: must be integer');

    const again = production();
    containers(find(again, 'Deployment', 'oms'))[0]['imagePullPolicyy'] = 'Always';
    expect(problemsOf(again)).toContain('Deployment/oms: /spec/template/spec/containers/0/imagePullPolicyy: unknown field');
  });

  it('refuses a kind it has no schema for', () => {
    const objects = [...production(), { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } } as K8sObject];
    expect(problemsOf(objects)).toEqual([expect.stringMatching(/^Widget\/w: no schema known/)]);
  });

  it('refuses a Service that selects no pod', () => {
    const objects = production();
    spec(find(objects, 'Service', 'banking'))['selector'] = { 'app.kubernetes.io/name': 'bank' };
    expect(problemsOf(objects)).toContain('Service/banking: its selector matches no pod');
  });

  it('refuses a Service port, a probe or a NetworkPolicy port that no container declares', () => {
    const objects = production();
    ((spec(find(objects, 'Service', 'oms'))['ports'] as JsonObject[])[0] as JsonObject)['targetPort'] = 'internall';
    containers(find(objects, 'Deployment', 'gateway'))[0]['readinessProbe'] = { httpGet: { path: '/readyz', port: 4199 } };
    ((spec(find(objects, 'NetworkPolicy', 'accounts-ingress'))['ingress'] as JsonObject[])[0]['ports'] as JsonObject[])[0]['port'] = 4111;
    const problems = problemsOf(objects);
    expect(problems).toContain('Service/oms: port internal targets internall, which Deployment/oms does not declare');
    expect(problems).toContain(
      'Deployment/gateway: container gateway readinessProbe names port 4199, which the container does not declare',
    );
    expect(problems).toContain('NetworkPolicy/accounts-ingress: ingress port 4111 is not a port of Deployment/accounts');
  });

  it('refuses a secretKeyRef or configMapKeyRef to nothing', () => {
    const objects = production();
    const env = containers(find(objects, 'Deployment', 'banking'))[0]['env'] as JsonObject[];
    env.push({ name: 'X', valueFrom: { secretKeyRef: { name: 'nobody', key: 'X' } } });
    env.push({ name: 'Y', valueFrom: { secretKeyRef: { name: 'banking-secrets', key: 'NOT_DOCUMENTED' } } });
    env.push({ name: 'Z', valueFrom: { configMapKeyRef: { name: 'platform-settings', key: 'Z' } } });
    const problems = problemsOf(objects);
    expect(problems).toContain(
      'Deployment/banking: container banking env X: Secret nobody is neither rendered nor in deploy/kubernetes/external-secrets.yaml for this overlay',
    );
    expect(problems).toContain(
      'Deployment/banking: container banking env Y: Secret banking-secrets (external) has no documented key NOT_DOCUMENTED',
    );
    expect(problems).toContain('Deployment/banking: container banking env Z: ConfigMap platform-settings is not rendered');
  });

  it('lets an optional configMapKeyRef name a key the ConfigMap lacks (the variable is unset), never a ConfigMap not rendered', () => {
    const objects = production();
    const settings = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('platform-settings-'))!.metadata.name;
    const env = containers(find(objects, 'Deployment', 'oms'))[0]['env'] as JsonObject[];
    env.push({ name: 'W', valueFrom: { configMapKeyRef: { name: settings, key: 'W', optional: true } } });
    expect(problemsOf(objects)).toEqual([]);
    env.push({ name: 'V', valueFrom: { configMapKeyRef: { name: settings, key: 'V' } } });
    env.push({ name: 'U', valueFrom: { configMapKeyRef: { name: 'platform-settings', key: 'U', optional: true } } });
    expect(problemsOf(objects)).toEqual([
      `Deployment/oms: container oms env V: ConfigMap ${settings} has no key V`,
      'Deployment/oms: container oms env U: ConfigMap platform-settings is not rendered',
    ]);
  });

  it('refuses a committed Secret value, and a documented Secret nothing uses', () => {
    const objects = [
      ...production(),
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'oops', namespace: 'trading' }, stringData: { PASSWORD: 'x' } } as K8sObject,
    ];
    const problems = validateObjects(objects, [...externalSecrets('production'), { name: 'stale', keys: ['K'], overlays: ['production'] }]);
    expect(problems).toContain('Secret/oops: holds values: Secrets are created out of band, never committed');
    expect(problems).toContain('external Secret stale is documented for this overlay but nothing references it');
  });

  it('refuses selectors that match nothing: NetworkPolicy, PodDisruptionBudget, HPA target, Ingress backend', () => {
    const objects = production();
    spec(find(objects, 'NetworkPolicy', 'oms-ingress'))['podSelector'] = { matchLabels: { 'app.kubernetes.io/name': 'omz' } };
    spec(find(objects, 'PodDisruptionBudget', 'auth'))['selector'] = { matchLabels: { 'app.kubernetes.io/name': 'outh' } };
    spec(find(objects, 'HorizontalPodAutoscaler', 'gateway'))['scaleTargetRef'] = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'gw' };
    const rule = (spec(find(objects, 'Ingress', 'public'))['rules'] as JsonObject[])[0];
    (((rule['http'] as JsonObject)['paths'] as JsonObject[])[0]['backend'] as JsonObject)['service'] = {
      name: 'rest-facade',
      port: { name: 'internal' },
    };
    const problems = problemsOf(objects);
    expect(problems).toContain('NetworkPolicy/oms-ingress: its podSelector matches no pod');
    expect(problems).toContain('PodDisruptionBudget/auth: its selector matches no pod');
    expect(problems).toContain('Deployment/auth: no PodDisruptionBudget selects its pods');
    expect(problems).toContain('HorizontalPodAutoscaler/gateway: scaleTargetRef Deployment/gw: no such object');
    expect(problems).toContain('Ingress/public: backend rest-facade port internal: the Service has no such port');
  });

  describe('ingress controllers reach their own Ingresses only (deploy/kubernetes/ingress-controllers.yaml)', () => {
    const controller = (release: string) => ({
      'app.kubernetes.io/name': 'ingress-nginx',
      'app.kubernetes.io/component': 'controller',
      'app.kubernetes.io/instance': release,
    });
    const rule = (objects: K8sObject[], policy: string, i: number) =>
      (spec(find(objects, 'NetworkPolicy', policy))['ingress'] as JsonObject[])[i];

    it('refuses the internal controller admitted to the facade (and the facade left without the public one)', () => {
      const objects = production();
      (rule(objects, 'rest-facade-ingress', 0)['from'] as JsonObject[])[0]['podSelector'] = {
        matchLabels: controller('ingress-nginx-internal'),
      };
      expect(problemsOf(objects)).toEqual([
        'NetworkPolicy/rest-facade-ingress: ingress admits the nginx-internal ingress controller to port 8080 of Deployment/rest-facade, which no Ingress of class nginx-internal routes to',
        'Ingress/public: routes to port 8080 of Deployment/rest-facade, but no NetworkPolicy admits the nginx ingress controller there',
      ]);
    });

    it('refuses the ingress namespace as a whole: it takes in the public controller, which must not reach the gateway', () => {
      const objects = production();
      delete (rule(objects, 'gateway-ingress', 0)['from'] as JsonObject[])[0]['podSelector'];
      expect(problemsOf(objects)).toEqual([
        'NetworkPolicy/gateway-ingress: ingress peer {"matchLabels":{"kubernetes.io/metadata.name":"ingress-nginx"}} takes in every pod of the namespace: name the pods (podSelector)',
        'NetworkPolicy/gateway-ingress: ingress admits the nginx ingress controller to port 4000 of Deployment/gateway, which no Ingress of class nginx routes to',
      ]);
    });

    it('refuses a rule open to every source or to an address block: either takes in both controllers', () => {
      const objects = production();
      delete rule(objects, 'auth-ingress', 1)['from'];
      rule(objects, 'oms-ingress', 0)['from'] = [{ ipBlock: { cidr: '10.0.0.0/8' } }];
      const problems = problemsOf(objects);
      for (const cls of ['nginx', 'nginx-internal']) {
        expect(problems).toContain(
          `NetworkPolicy/auth-ingress: ingress admits the ${cls} ingress controller to port 8181 of Deployment/auth, which no Ingress of class ${cls} routes to`,
        );
        expect(problems).toContain(
          `NetworkPolicy/oms-ingress: ingress admits the ${cls} ingress controller to port 4103 of Deployment/oms, which no Ingress of class ${cls} routes to`,
        );
      }
    });

    it('refuses an Ingress backend no policy opens to its controller, and a class no controller serves', () => {
      const objects = production();
      (rule(objects, 'gateway-ingress', 0)['from'] as JsonObject[])[0]['podSelector'] = { matchLabels: controller('ingress-nginx-intern') };
      expect(problemsOf(objects)).toEqual([
        'Ingress/gateway-internal: routes to port 4000 of Deployment/gateway, but no NetworkPolicy admits the nginx-internal ingress controller there',
      ]);

      const again = production();
      spec(find(again, 'Ingress', 'gateway-internal'))['ingressClassName'] = 'internal';
      expect(problemsOf(again)).toEqual([
        'Ingress/gateway-internal: ingressClassName internal: no controller serves it in deploy/kubernetes/ingress-controllers.yaml',
        'NetworkPolicy/gateway-ingress: ingress admits the nginx-internal ingress controller to port 4000 of Deployment/gateway, which no Ingress of class nginx-internal routes to',
      ]);
    });

    it("refuses another namespace's peer named by namespace only, or every namespace, in either direction", () => {
      const objects = production();
      const collector = (
        (spec(find(objects, 'NetworkPolicy', 'otel-collector-egress'))['egress'] as JsonObject[])[0]['to'] as JsonObject[]
      )[0];
      delete collector['podSelector'];
      (rule(objects, 'accounts-ingress', 1)['from'] as JsonObject[])[0]['namespaceSelector'] = {};
      expect(problemsOf(objects)).toEqual([
        'NetworkPolicy/accounts-ingress: ingress peer {"namespaceSelector":{},"podSelector":{"matchLabels":{"app.kubernetes.io/name":"prometheus"}}} selects every namespace: name it',
        'NetworkPolicy/otel-collector-egress: egress peer {"matchLabels":{"kubernetes.io/metadata.name":"observability"}} takes in every pod of the namespace: name the pods (podSelector)',
      ]);
    });
  });

  it.each(['dev', 'production'])(
    "sends the API host's /v1/oauth straight to auth's public listener, everything else of it to the facade (%s)",
    (overlay) => {
      const ingress = find(renderKustomization(overlayDir(overlay)), 'Ingress', 'public');
      const rules = spec(ingress)['rules'] as Array<{ host: string; http: { paths: JsonObject[] } }>;
      const api = rules.find((r) => r.host.startsWith('api.'))!;
      const route = (path: string) => {
        const p = api.http.paths.find((x) => x['path'] === path)!;
        return [p['pathType'], (p['backend'] as { service: { name: string; port: { name: string } } }).service];
      };
      expect(route('/v1/oauth')).toEqual(['Prefix', { name: 'auth', port: { name: 'public' } }]);
      expect(route('/')).toEqual(['Prefix', { name: 'rest-facade', port: { name: 'public' } }]);
    },
  );

  it('refuses a workload without the drain, non-root or read-only root, and replicas under an autoscaler', () => {
    const objects = production();
    const d = find(objects, 'Deployment', 'accounts');
    const [c] = containers(d);
    delete c['lifecycle'];
    (c['securityContext'] as JsonObject)['readOnlyRootFilesystem'] = false;
    // A grace period that ends before the gateway's own stop deadline (5 s preStop + 20 s + 2 s).
    podSpec(find(objects, 'Deployment', 'gateway'))!['terminationGracePeriodSeconds'] = 26;
    spec(d)['replicas'] = 3;
    const problems = problemsOf(objects);
    expect(problems).toContain(
      'Deployment/accounts: container accounts: needs a preStop sleep, so endpoint removal reaches the proxies before the listeners close',
    );
    expect(problems).toContain('Deployment/accounts: container accounts: readOnlyRootFilesystem is not set');
    expect(problems).toContain(
      "Deployment/gateway: container gateway: terminationGracePeriodSeconds 26 is under the preStop sleep (5 s) + the apps' stop deadline (20 s) + 2 s: Kubernetes would SIGKILL a pod that is still closing on its own",
    );
    expect(problems).toContain(
      'HorizontalPodAutoscaler/accounts: Deployment/accounts sets spec.replicas, which every kubectl apply would reset under the autoscaler',
    );
  });
});

describe('the in-cluster PostgreSQL: a CloudNativePG Cluster with a synchronous standby (dev overlay)', () => {
  /** A fresh copy of the dev overlay's objects, which run PostgreSQL in the cluster. */
  const dev = () => renderKustomization(overlayDir('dev'));
  const devProblems = (objects: K8sObject[]) => validateObjects(objects, externalSecrets('dev'));
  const cluster = (objects: K8sObject[]) => spec(find(objects, 'Cluster', 'postgres'));
  const postgresql = (objects: K8sObject[]) => cluster(objects)['postgresql'] as JsonObject;
  const env = (objects: K8sObject[], app: string) => containers(find(objects, 'Deployment', app))[0]['env'] as JsonObject[];
  const url = (objects: K8sObject[], app: string, name: string) => env(objects, app).find((e) => e['name'] === name)!;

  it('accepts the dev overlay as it is', () => {
    expect(devProblems(dev())).toEqual([]);
  });

  it('refuses a Cluster without a synchronous standby: no synchronous stanza, or a single instance', () => {
    const objects = dev();
    delete postgresql(objects)['synchronous'];
    expect(devProblems(objects)).toEqual([
      'Cluster/postgres: no synchronous replication (spec.postgresql.synchronous): a commit would return before any standby has it, and a failover could lose it',
    ]);

    const single = dev();
    cluster(single)['instances'] = 1;
    expect(devProblems(single)).toEqual([
      'Cluster/postgres: spec.instances is 1: a synchronous standby needs at least two instances',
      'Cluster/postgres: spec.postgresql.synchronous.number 1 is more than its 0 standby(s): no commit could complete',
    ]);
  });

  it('refuses the deprecated minSyncReplicas/maxSyncReplicas, and more synchronous standbys than there are standbys', () => {
    const objects = dev();
    cluster(objects)['minSyncReplicas'] = 1;
    cluster(objects)['maxSyncReplicas'] = 1;
    (postgresql(objects)['synchronous'] as JsonObject)['number'] = 3;
    expect(devProblems(objects)).toEqual([
      'Cluster/postgres: minSyncReplicas/maxSyncReplicas are deprecated: set spec.postgresql.synchronous (method, number)',
      'Cluster/postgres: spec.postgresql.synchronous.number 3 is more than its 2 standby(s): no commit could complete',
    ]);
  });

  it("checks the Cluster and Database against the operator's CRD schemas: types, enums, required and unknown fields", () => {
    const objects = dev();
    (postgresql(objects)['synchronous'] as JsonObject)['method'] = 'all';
    cluster(objects)['instances'] = 'three';
    delete spec(find(objects, 'Database', 'postgres-oms'))['owner'];
    expect(devProblems(objects)).toEqual([
      'Cluster/postgres: /spec/instances: must be integer',
      'Cluster/postgres: /spec/postgresql/synchronous/method: must be equal to one of the allowed values',
      "Database/postgres-oms: /spec: must have required property 'owner'",
    ]);

    const again = dev();
    (postgresql(again)['synchronous'] as JsonObject)['numbr'] = 1;
    (find(again, 'Cluster', 'postgres').metadata as JsonObject)['label'] = 'x';
    expect(devProblems(again)).toEqual([
      'Cluster/postgres: /metadata/label: unknown field',
      'Cluster/postgres: /spec/postgresql/synchronous/numbr: unknown field',
    ]);
  });

  it("refuses a service whose database host is not the Cluster's read-write Service", () => {
    const objects = dev();
    url(objects, 'oms', 'OMS_DATABASE_URL')['value'] = 'postgres://oms:$(OMS_DATABASE_PASSWORD)@postgres-ro:5432/oms';
    url(objects, 'banking', 'BANKING_DATABASE_URL')['value'] = 'postgres://banking:$(BANKING_DATABASE_PASSWORD)@postgres:5432/banking';
    // Qualified by the namespace, the read-write Service is as good as its short name.
    url(objects, 'auth', 'AUTH_DATABASE_URL')['value'] = 'postgres://auth:$(AUTH_DATABASE_PASSWORD)@postgres-rw.trading-dev.svc:5432/auth';
    expect(devProblems(objects)).toEqual([
      "Deployment/banking: container banking env BANKING_DATABASE_URL: connects to postgres, which is no PostgreSQL Cluster's read-write Service (<cluster>-rw); an external server's URL belongs in the service's Secret",
      "Deployment/oms: container oms env OMS_DATABASE_URL: connects to postgres-ro, a Service of Cluster postgres's standbys, where writes fail: use postgres-rw",
    ]);
  });

  it('refuses a URL with a role or database the Cluster does not create, or a password variable defined after it', () => {
    const objects = dev();
    url(objects, 'oms', 'OMS_DATABASE_URL')['value'] = 'postgres://postgres:$(OMS_DATABASE_PASSWORD)@postgres-rw:5432/oms';
    url(objects, 'banking', 'BANKING_DATABASE_URL')['value'] = 'postgres://banking:$(BANKING_DATABASE_PASSWORD)@postgres-rw:5432/bank';
    env(objects, 'accounts').reverse();
    expect(devProblems(objects)).toEqual([
      'Deployment/accounts: container accounts env ACCOUNTS_DATABASE_URL: $(ACCOUNTS_DATABASE_PASSWORD) is not defined before it, so it is never expanded',
      'Deployment/banking: container banking env BANKING_DATABASE_URL: names database bank, which Cluster postgres does not create (a Database object)',
      'Deployment/oms: container oms env OMS_DATABASE_URL: connects as postgres, which is no role of Cluster postgres',
    ]);
  });

  it("refuses a Database of no Cluster or owned by no role of it, and a role's password Secret nobody creates", () => {
    const objects = dev();
    spec(find(objects, 'Database', 'postgres-oms'))['cluster'] = { name: 'pg' };
    spec(find(objects, 'Database', 'postgres-banking'))['owner'] = 'bank';
    ((cluster(objects)['managed'] as JsonObject)['roles'] as JsonObject[])[1]['passwordSecret'] = { name: 'accounts-db' };
    expect(devProblems(objects)).toEqual([
      // The oms service's database is no longer one that Cluster creates.
      'Deployment/oms: container oms env OMS_DATABASE_URL: names database oms, which Cluster postgres does not create (a Database object)',
      'Cluster/postgres: role password: Secret accounts-db is neither rendered nor in deploy/kubernetes/external-secrets.yaml for this overlay',
      'Database/postgres-banking: owner bank is no role of Cluster postgres (spec.managed.roles)',
      'Database/postgres-oms: cluster pg: no such Cluster',
    ]);
  });

  it("holds policies to the instances' ports, as to any pod's", () => {
    const objects = dev();
    const rules = spec(find(objects, 'NetworkPolicy', 'postgres-ingress'))['ingress'] as JsonObject[];
    (rules[0]['ports'] as JsonObject[])[0]['port'] = 5433;
    spec(find(objects, 'NetworkPolicy', 'postgres-egress'))['egress'] = [
      { to: [{ podSelector: { matchLabels: { 'cnpg.io/cluster': 'pg' } } }], ports: [{ protocol: 'TCP', port: 5432 }] },
    ];
    expect(devProblems(objects)).toEqual([
      'NetworkPolicy/postgres-egress: egress peer {"matchLabels":{"cnpg.io/cluster":"pg"}} matches no pod',
      'NetworkPolicy/postgres-ingress: ingress port 5433 is not a port of Cluster/postgres',
    ]);
  });
});

describe('the Kustomize subset renderer', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kustomize-'));
    mkdirSync(join(dir, 'base'));
    mkdirSync(join(dir, 'overlay'));
    writeFileSync(
      join(dir, 'base/app.yaml'),
      `apiVersion: apps/v1
kind: Deployment
metadata: { name: app }
spec:
  selector: { matchLabels: { app: a } }
  template:
    metadata: { labels: { app: a } }
    spec:
      containers:
        - name: app
          image: registry.example/app:1
          env: [{ name: A, value: "1" }, { name: B, valueFrom: { configMapKeyRef: { name: settings, key: B } } }]
        - { name: sidecar, image: busybox }
`,
    );
    writeFileSync(
      join(dir, 'base/kustomization.yaml'),
      'resources: [app.yaml]\nconfigMapGenerator: [{ name: settings, literals: [B=base, C=base] }]\n',
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const overlay = (kustomization: string, files: Record<string, string> = {}) => {
    writeFileSync(join(dir, 'overlay/kustomization.yaml'), kustomization);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'overlay', name), text);
    return renderKustomization(join(dir, 'overlay'));
  };

  it('renders with kubectl kustomize: patches merged, generated ConfigMaps hashed and referenced by their hashed name', () => {
    const objects = overlay(
      `namespace: ns
resources: [../base]
labels: [{ pairs: { team: t }, includeTemplates: true }]
images: [{ name: registry.example/app, newTag: "2" }]
replicas: [{ name: app, count: 3 }]
configMapGenerator: [{ name: settings, behavior: merge, literals: [C=overlay] }]
patches: [{ path: patch.yaml }]
`,
      {
        'patch.yaml':
          'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: app }\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          env: [{ name: A, value: "2" }, { name: D, value: "4" }]\n',
      },
    );
    const cm = objects.find((o) => o.kind === 'ConfigMap')!;
    const d = objects.find((o) => o.kind === 'Deployment')!;
    const [app, sidecar] = containers(d);
    expect(cm['data']).toEqual({ B: 'base', C: 'overlay' });
    expect(cm.metadata.name).toMatch(/^settings-[a-z0-9]{10}$/);
    const byName = (env: JsonObject[]) => [...env].sort((a, b) => String(a['name']).localeCompare(String(b['name'])));
    expect(byName(app!['env'] as JsonObject[])).toEqual([
      { name: 'A', value: '2' },
      { name: 'B', valueFrom: { configMapKeyRef: { name: cm.metadata.name, key: 'B' } } },
      { name: 'D', value: '4' },
    ]);
    expect([app!['image'], sidecar!['image']]).toEqual(['registry.example/app:2', 'busybox']);
    expect(d.metadata).toMatchObject({ namespace: 'ns', labels: { team: 't' } });
    expect(spec(d)['replicas']).toBe(3);
    expect(spec(d)['selector']).toEqual({ matchLabels: { app: 'a' } });
  });

  it('refuses what this repository forbids (with the reason), and says what kubectl refused', () => {
    expect(() => overlay('resources: [../base]\ncommonLabels: { a: b }\n')).toThrow(/"commonLabels" is not used here.*selectors/);
    expect(() => overlay('resources: [../base]\nsecretGenerator: [{ name: s, literals: [A=b] }]\n')).toThrow(
      /no secret value belongs in this repository/,
    );
    expect(() => overlay('resources: [../base]\nlabels: [{ pairs: { a: b }, includeSelectors: true }]\n')).toThrow(
      /selectors are immutable/,
    );
    expect(() => overlay('resources: [../base]\nconfigMapGenerator: [{ name: x, files: [../base/app.yaml] }]\n')).toThrow(
      /kubectl kustomize .*overlay: .*(security|outside|not in or below)/,
    );
    expect(() => overlay('resources: [../base, ../missing]\n')).toThrow(/kubectl kustomize .*missing/);
  });

  it('refuses what this repository forbids in a component too', () => {
    mkdirSync(join(dir, 'component'));
    writeFileSync(
      join(dir, 'component/kustomization.yaml'),
      'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nsecretGenerator: [{ name: s, literals: [A=b] }]\n',
    );
    expect(() => overlay('resources: [../base]\ncomponents: [../component]\n')).toThrow(
      /component.*no secret value belongs in this repository/,
    );
  });
});
