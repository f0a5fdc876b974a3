import { findingText } from './engine';
import { containers, overlayDir, podSpec, renderKustomization, type JsonObject, type K8sObject } from './kustomize';
import type { ExternalSecret } from './overlay-model';
import { POLICY } from './policy';
import { externalSecrets, policyFindings, validateObjects } from './validate';

/**
 * One case per rule at least: a manifest that breaks the rule (one of the overlays, with one
 * thing changed), and the finding the rule must report for it. The broken manifest still passes
 * the schemas, so the rule is what catches it.
 */
interface Case {
  rule: string;
  overlay?: 'production' | 'dev';
  break: (objects: K8sObject[], secrets: ExternalSecret[]) => void;
  finding: string;
}

const find = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)!;
const spec = (o: K8sObject) => o['spec'] as JsonObject;
const container = (objects: K8sObject[], name: string) => containers(find(objects, 'Deployment', name))[0]!;
const pod = (objects: K8sObject[], name: string) => podSpec(find(objects, 'Deployment', name))!;
const env = (objects: K8sObject[], name: string) => container(objects, name)['env'] as JsonObject[];
const without = (objects: K8sObject[], kind: string, name: string) => objects.splice(objects.indexOf(find(objects, kind, name)), 1);
const policy = (objects: K8sObject[], name: string, direction: 'ingress' | 'egress', i: number) =>
  (spec(find(objects, 'NetworkPolicy', name))[direction] as JsonObject[])[i]!;
const cluster = (objects: K8sObject[]) => spec(find(objects, 'Cluster', 'postgres'));
const synchronous = (objects: K8sObject[]) => (cluster(objects)['postgresql'] as JsonObject)['synchronous'] as JsonObject;
/** The public Ingress's route to the facade (the API host's `/`; its `/v1/oauth` goes to auth). */
const publicPath = (objects: K8sObject[]) => {
  const paths = (((spec(find(objects, 'Ingress', 'public'))['rules'] as JsonObject[])[0]!['http'] as JsonObject)['paths'] as JsonObject[])!;
  return (paths.find((p) => p['path'] === '/')!['backend'] as JsonObject)['service'] as JsonObject;
};

const CASES: Case[] = [
  {
    rule: 'secret-holds-no-values',
    break: (o) => o.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'oops', namespace: 'trading' }, stringData: { A: 'x' } }),
    finding: 'Secret/oops: holds values: Secrets are created out of band, never committed',
  },
  {
    rule: 'workload-selector-matches-template',
    break: (o) => (spec(find(o, 'Deployment', 'oms'))['selector'] = { matchLabels: { 'app.kubernetes.io/name': 'omz' } }),
    finding: "Deployment/oms: its selector does not match its own pod template's labels",
  },
  {
    rule: 'service-account-exists',
    break: (o) => (pod(o, 'oms')['serviceAccountName'] = 'nobody'),
    finding: 'Deployment/oms: serviceAccountName nobody: no such ServiceAccount',
  },
  {
    rule: 'probe-port-declared',
    break: (o) => (container(o, 'gateway')['readinessProbe'] = { httpGet: { path: '/readyz', port: 4199 } }),
    finding: 'Deployment/gateway: container gateway readinessProbe names port 4199, which the container does not declare',
  },
  {
    rule: 'env-expansion-defined',
    break: (o) => env(o, 'oms').unshift({ name: 'GREETING', value: 'hello $(LOG_LEVEL) $$(LITERAL)' }),
    finding: 'Deployment/oms: container oms env GREETING: $(LOG_LEVEL) is not defined before it, so it is never expanded',
  },
  {
    rule: 'database-url-reaches-cluster',
    overlay: 'dev',
    break: (o) =>
      (env(o, 'oms').find((e) => e['name'] === 'OMS_DATABASE_URL')!['value'] =
        'postgres://oms:$(OMS_DATABASE_PASSWORD)@postgres-ro:5432/oms'),
    finding:
      "Deployment/oms: container oms env OMS_DATABASE_URL: connects to postgres-ro, a Service of Cluster postgres's standbys, where writes fail: use postgres-rw",
  },
  {
    rule: 'database-url-reaches-cluster',
    break: (o) => env(o, 'oms').push({ name: 'OMS_DATABASE_URL', value: 'postgres://oms:secret@db.example:5432/oms' }),
    finding:
      "Deployment/oms: container oms env OMS_DATABASE_URL: connects to db.example, which is no PostgreSQL Cluster's read-write Service (<cluster>-rw); an external server's URL belongs in the service's Secret",
  },
  {
    rule: 'env-key-exists',
    break: (o) => env(o, 'banking').push({ name: 'X', valueFrom: { secretKeyRef: { name: 'banking-secrets', key: 'NOT_DOCUMENTED' } } }),
    finding: 'Deployment/banking: container banking env X: Secret banking-secrets (external) has no documented key NOT_DOCUMENTED',
  },
  {
    rule: 'env-from-exists',
    break: (o) => (container(o, 'banking')['envFrom'] = [{ configMapRef: { name: 'banking-settings' } }]),
    finding: 'Deployment/banking: container banking envFrom: ConfigMap banking-settings is not rendered',
  },
  {
    rule: 'mount-is-volume',
    break: (o) => (container(o, 'auth')['volumeMounts'] as JsonObject[]).push({ name: 'cache', mountPath: '/cache' }),
    finding: 'Deployment/auth: container auth mounts cache, which is no volume of the pod',
  },
  {
    rule: 'volume-source-exists',
    break: (o) => (pod(o, 'auth')['volumes'] as JsonObject[]).push({ name: 'keys', secret: { secretName: 'auth-keys' } }),
    finding:
      'Deployment/auth: volume keys: Secret auth-keys is neither rendered nor in deploy/kubernetes/external-secrets.yaml for this overlay',
  },
  {
    rule: 'spread-selects-own-pods',
    break: (o) =>
      ((pod(o, 'accounts')['topologySpreadConstraints'] as JsonObject[])[1]!['labelSelector'] = {
        matchLabels: { 'app.kubernetes.io/name': 'oms' },
      }),
    finding: 'Deployment/accounts: topology spread on topology.kubernetes.io/zone selects other pods than its own',
  },
  {
    rule: 'no-service-account-token',
    break: (o) => delete pod(o, 'accounts')['automountServiceAccountToken'],
    finding: 'Deployment/accounts: automountServiceAccountToken must be false (no app calls the Kubernetes API)',
  },
  {
    rule: 'run-as-non-root',
    break: (o) => ((container(o, 'accounts')['securityContext'] as JsonObject)['runAsNonRoot'] = false),
    finding: 'Deployment/accounts: container accounts: runAsNonRoot is not set',
  },
  {
    rule: 'read-only-root-filesystem',
    break: (o) => delete (container(o, 'accounts')['securityContext'] as JsonObject)['readOnlyRootFilesystem'],
    finding: 'Deployment/accounts: container accounts: readOnlyRootFilesystem is not set',
  },
  {
    rule: 'no-privilege-escalation',
    break: (o) => ((container(o, 'accounts')['securityContext'] as JsonObject)['allowPrivilegeEscalation'] = true),
    finding: 'Deployment/accounts: container accounts: allowPrivilegeEscalation is not false',
  },
  {
    rule: 'resource-requests',
    break: (o) => delete ((container(o, 'accounts')['resources'] as JsonObject)['requests'] as JsonObject)['cpu'],
    finding: 'Deployment/accounts: container accounts: no CPU and memory requests',
  },
  {
    rule: 'resource-requests',
    overlay: 'dev',
    break: (o) => delete (cluster(o)['resources'] as JsonObject)['requests'],
    finding: 'Cluster/postgres: spec.resources: no CPU and memory requests',
  },
  {
    rule: 'memory-limit',
    break: (o) => delete ((container(o, 'accounts')['resources'] as JsonObject)['limits'] as JsonObject)['memory'],
    finding: 'Deployment/accounts: container accounts: no memory limit',
  },
  {
    rule: 'memory-limit',
    overlay: 'dev',
    break: (o) => delete (cluster(o)['resources'] as JsonObject)['limits'],
    finding: 'Cluster/postgres: spec.resources: no memory limit',
  },
  {
    rule: 'liveness-and-readiness-probes',
    break: (o) => delete container(o, 'accounts')['livenessProbe'],
    finding: 'Deployment/accounts: container accounts: needs a liveness and a readiness probe',
  },
  {
    rule: 'prestop-sleep',
    break: (o) => delete container(o, 'accounts')['lifecycle'],
    finding:
      'Deployment/accounts: container accounts: needs a preStop sleep, so endpoint removal reaches the proxies before the listeners close',
  },
  {
    // 5 s preStop + the apps' 20 s stop deadline + 2 s is 27 s.
    rule: 'grace-outlasts-stop',
    break: (o) => (pod(o, 'gateway')['terminationGracePeriodSeconds'] = 26),
    finding:
      "Deployment/gateway: container gateway: terminationGracePeriodSeconds 26 is under the preStop sleep (5 s) + the apps' stop deadline (20 s) + 2 s: Kubernetes would SIGKILL a pod that is still closing on its own",
  },
  {
    rule: 'disruption-budget',
    break: (o) => without(o, 'PodDisruptionBudget', 'auth'),
    finding: 'Deployment/auth: no PodDisruptionBudget selects its pods',
  },
  {
    rule: 'service-selects-pods',
    break: (o) => (spec(find(o, 'Service', 'banking'))['selector'] = { 'app.kubernetes.io/name': 'bank' }),
    finding: 'Service/banking: its selector matches no pod',
  },
  {
    rule: 'service-target-port-declared',
    break: (o) => ((spec(find(o, 'Service', 'oms'))['ports'] as JsonObject[])[0]!['targetPort'] = 'internall'),
    finding: 'Service/oms: port internal targets internall, which Deployment/oms does not declare',
  },
  {
    rule: 'budget-selects-pods',
    break: (o) => (spec(find(o, 'PodDisruptionBudget', 'auth'))['selector'] = { matchLabels: { 'app.kubernetes.io/name': 'outh' } }),
    finding: 'PodDisruptionBudget/auth: its selector matches no pod',
  },
  {
    rule: 'autoscaler-target-exists',
    break: (o) =>
      (spec(find(o, 'HorizontalPodAutoscaler', 'gateway'))['scaleTargetRef'] = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'gw' }),
    finding: 'HorizontalPodAutoscaler/gateway: scaleTargetRef Deployment/gw: no such object',
  },
  {
    rule: 'autoscaler-owns-replicas',
    break: (o) => (spec(find(o, 'Deployment', 'accounts'))['replicas'] = 3),
    finding:
      'HorizontalPodAutoscaler/accounts: Deployment/accounts sets spec.replicas, which every kubectl apply would reset under the autoscaler',
  },
  {
    rule: 'postgres-standby-instance',
    overlay: 'dev',
    break: (o) => (cluster(o)['instances'] = 1),
    finding: 'Cluster/postgres: spec.instances is 1: a synchronous standby needs at least two instances',
  },
  {
    rule: 'postgres-no-deprecated-sync-replicas',
    overlay: 'dev',
    break: (o) => (cluster(o)['maxSyncReplicas'] = 1),
    finding: 'Cluster/postgres: minSyncReplicas/maxSyncReplicas are deprecated: set spec.postgresql.synchronous (method, number)',
  },
  {
    rule: 'postgres-synchronous-commit',
    overlay: 'dev',
    break: (o) => delete (cluster(o)['postgresql'] as JsonObject)['synchronous'],
    finding:
      'Cluster/postgres: no synchronous replication (spec.postgresql.synchronous): a commit would return before any standby has it, and a failover could lose it',
  },
  {
    rule: 'postgres-synchronous-standbys-exist',
    overlay: 'dev',
    break: (o) => (synchronous(o)['number'] = 3),
    finding: 'Cluster/postgres: spec.postgresql.synchronous.number 3 is more than its 2 standby(s): no commit could complete',
  },
  {
    rule: 'postgres-storage',
    overlay: 'dev',
    break: (o) => delete (cluster(o)['storage'] as JsonObject)['size'],
    finding: 'Cluster/postgres: spec.storage has no size: the instances would have no volume',
  },
  {
    rule: 'postgres-role-secret',
    overlay: 'dev',
    break: (o) => (((cluster(o)['managed'] as JsonObject)['roles'] as JsonObject[])[1]!['passwordSecret'] = { name: 'accounts-db' }),
    finding:
      'Cluster/postgres: role password: Secret accounts-db is neither rendered nor in deploy/kubernetes/external-secrets.yaml for this overlay',
  },
  {
    rule: 'database-cluster-exists',
    overlay: 'dev',
    break: (o) => (spec(find(o, 'Database', 'postgres-oms'))['cluster'] = { name: 'pg' }),
    finding: 'Database/postgres-oms: cluster pg: no such Cluster',
  },
  {
    rule: 'database-owner-is-role',
    overlay: 'dev',
    break: (o) => (spec(find(o, 'Database', 'postgres-banking'))['owner'] = 'bank'),
    finding: 'Database/postgres-banking: owner bank is no role of Cluster postgres (spec.managed.roles)',
  },
  {
    rule: 'policy-selects-pods',
    break: (o) => (spec(find(o, 'NetworkPolicy', 'oms-ingress'))['podSelector'] = { matchLabels: { 'app.kubernetes.io/name': 'omz' } }),
    finding: 'NetworkPolicy/oms-ingress: its podSelector matches no pod',
  },
  {
    rule: 'peer-names-namespace',
    break: (o) => ((policy(o, 'accounts-ingress', 'ingress', 1)['from'] as JsonObject[])[0]!['namespaceSelector'] = {}),
    finding:
      'NetworkPolicy/accounts-ingress: ingress peer {"namespaceSelector":{},"podSelector":{"matchLabels":{"app.kubernetes.io/name":"prometheus"}}} selects every namespace: name it',
  },
  {
    rule: 'peer-names-pods',
    break: (o) => delete (policy(o, 'otel-collector-egress', 'egress', 0)['to'] as JsonObject[])[0]!['podSelector'],
    finding:
      'NetworkPolicy/otel-collector-egress: egress peer {"matchLabels":{"kubernetes.io/metadata.name":"observability"}} takes in every pod of the namespace: name the pods (podSelector)',
  },
  {
    rule: 'controller-admitted-only-where-routed',
    break: (o) => delete policy(o, 'auth-ingress', 'ingress', 1)['from'],
    finding:
      'NetworkPolicy/auth-ingress: ingress admits the nginx-internal ingress controller to port 8181 of Deployment/auth, which no Ingress of class nginx-internal routes to',
  },
  {
    rule: 'pod-peer-matches',
    overlay: 'dev',
    break: (o) =>
      (spec(find(o, 'NetworkPolicy', 'postgres-egress'))['egress'] = [
        { to: [{ podSelector: { matchLabels: { 'cnpg.io/cluster': 'pg' } } }], ports: [{ protocol: 'TCP', port: 5432 }] },
      ]),
    finding: 'NetworkPolicy/postgres-egress: egress peer {"matchLabels":{"cnpg.io/cluster":"pg"}} matches no pod',
  },
  {
    rule: 'policy-port-declared',
    break: (o) => ((policy(o, 'accounts-ingress', 'ingress', 0)['ports'] as JsonObject[])[0]!['port'] = 4111),
    finding: 'NetworkPolicy/accounts-ingress: ingress port 4111 is not a port of Deployment/accounts',
  },
  {
    rule: 'ingress-class-served',
    break: (o) => (spec(find(o, 'Ingress', 'gateway-internal'))['ingressClassName'] = 'internal'),
    finding: 'Ingress/gateway-internal: ingressClassName internal: no controller serves it in deploy/kubernetes/ingress-controllers.yaml',
  },
  {
    rule: 'tls-secret-exists',
    break: (o) => ((spec(find(o, 'Ingress', 'public'))['tls'] as JsonObject[])[0]!['secretName'] = 'public-tls-2'),
    finding: 'Ingress/public: tls: Secret public-tls-2 is neither rendered nor in deploy/kubernetes/external-secrets.yaml for this overlay',
  },
  {
    rule: 'backend-service-exists',
    break: (o) => (publicPath(o)['name'] = 'facade'),
    finding: 'Ingress/public: backend Service facade: no such Service',
  },
  {
    rule: 'backend-port-exists',
    break: (o) => (publicPath(o)['port'] = { name: 'internal' }),
    finding: 'Ingress/public: backend rest-facade port internal: the Service has no such port',
  },
  {
    rule: 'route-admitted',
    break: (o) =>
      ((policy(o, 'rest-facade-ingress', 'ingress', 0)['from'] as JsonObject[])[0]!['podSelector'] = {
        matchLabels: { 'app.kubernetes.io/instance': 'ingress-nginx-public' },
      }),
    finding:
      'Ingress/public: routes to port 8080 of Deployment/rest-facade, but no NetworkPolicy admits the nginx ingress controller there',
  },
  {
    rule: 'external-secret-referenced',
    break: (_, secrets) => secrets.push({ name: 'stale', keys: ['K'], overlays: ['production'] }),
    finding: 'external Secret stale is documented for this overlay but nothing references it',
  },
  {
    rule: 'namespace-default-deny',
    break: (o) => without(o, 'NetworkPolicy', 'default-deny'),
    finding: 'namespace trading: no default-deny NetworkPolicy (ingress and egress)',
  },
];

const rendered = { production: renderKustomization(overlayDir('production')), dev: renderKustomization(overlayDir('dev')) };

describe('the policy: every rule fails on a manifest that breaks it', () => {
  it('has a case for every rule, and no case for a rule it does not have', () => {
    const names = POLICY.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...new Set(CASES.map((c) => c.rule))].sort()).toEqual([...names].sort());
  });

  it.each(['production', 'dev'] as const)('finds nothing in the %s overlay as it is', (overlay) => {
    expect(policyFindings(structuredClone(rendered[overlay]), externalSecrets(overlay))).toEqual([]);
  });

  it.each(CASES.map((c) => [`${c.rule} (${c.overlay ?? 'production'})`, c] as const))('%s', (_, c) => {
    const overlay = c.overlay ?? 'production';
    const objects = structuredClone(rendered[overlay]);
    const secrets = externalSecrets(overlay);
    c.break(objects, secrets);
    const findings = policyFindings(objects, secrets);
    expect(findings.filter((f) => f.rule === c.rule).map(findingText)).toContain(c.finding);
    // Still well-formed: the schemas let it through, and the policy is what refuses it.
    expect(validateObjects(objects, secrets)).toEqual(findings.map(findingText));
  });

  it('does not count an escaped $$(NAME) as an expansion', () => {
    const objects = structuredClone(rendered.production);
    env(objects, 'oms').push({ name: 'GREETING', value: 'hello $$(UNSET)' });
    expect(policyFindings(objects, externalSecrets('production'))).toEqual([]);
  });
});
