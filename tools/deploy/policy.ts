/**
 * The policy a rendered overlay is held to, as a table of named rules (applied by engine.ts).
 * Two sorts: references between objects, which the API server accepts dangling and which then
 * fail at run time (a Service that selects no pod, a probe on a port that does not exist, an env
 * var from a Secret nobody creates); and the platform's own rules for its workloads (probes,
 * drain, non-root, read-only root, a budget for disruptions, deny by default, each ingress
 * controller admitted to its own Ingresses' backends only) and for the in-cluster PostgreSQL (a
 * CloudNativePG Cluster with a synchronous standby, which the services reach through its
 * read-write Service). Every rule has a case in policy.spec.ts that breaks it.
 */
import { rule, type Rule } from './engine';
import { describe, type JsonObject, type K8sObject } from './kustomize';
import { declares, isDefaultDeny, isEmpty, ns, routeKey, servicePort, specOf, type Overlay, type Selector } from './overlay-model';
import * as part from './parts';
import { WORKLOAD_REFERENCES, WORKLOAD_RULES } from './policy-workloads';
import { CLUSTER, DATABASE, clusterRoles, databaseCluster, instances, synchronous } from './postgres';

/** A failover must never lose a commit the services were told succeeded: a commit waits for a synchronous standby, and there are instances enough for one. */
const POSTGRES_RULES: Rule[] = [
  rule({
    name: 'postgres-standby-instance',
    select: { kinds: [CLUSTER] },
    require: (o) => instances(o) >= 2,
    message: (o) => `spec.instances is ${instances(o)}: a synchronous standby needs at least two instances`,
  }),
  rule({
    name: 'postgres-no-deprecated-sync-replicas',
    select: { kinds: [CLUSTER] },
    require: (o) => specOf(o)['minSyncReplicas'] === undefined && specOf(o)['maxSyncReplicas'] === undefined,
    message: 'minSyncReplicas/maxSyncReplicas are deprecated: set spec.postgresql.synchronous (method, number)',
  }),
  rule({
    name: 'postgres-synchronous-commit',
    select: { kinds: [CLUSTER] },
    require: (o) => !!synchronous(o),
    message:
      'no synchronous replication (spec.postgresql.synchronous): a commit would return before any standby has it, and a failover could lose it',
  }),
  rule({
    name: 'postgres-synchronous-standbys-exist',
    select: { kinds: [CLUSTER], each: (o) => (synchronous(o) ? [{ o, number: Number(synchronous(o)!['number']) }] : []) },
    require: ({ o, number }) => number <= instances(o) - 1,
    message: ({ o, number }) =>
      `spec.postgresql.synchronous.number ${number} is more than its ${instances(o) - 1} standby(s): no commit could complete`,
  }),
  rule({
    name: 'postgres-storage',
    select: { kinds: [CLUSTER] },
    require: (o) => !!((specOf(o)['storage'] ?? {}) as JsonObject)['size'] || !!((specOf(o)['storage'] ?? {}) as JsonObject)['pvcTemplate'],
    message: 'spec.storage has no size: the instances would have no volume',
  }),
  rule({
    // The operator reads a role's credentials from a kubernetes.io/basic-auth Secret.
    name: 'postgres-role-secret',
    select: { kinds: [CLUSTER], each: (o) => part.roleSecretParts(o).map((name) => ({ name, namespace: ns(o) })) },
    require: ({ name, namespace }, v) => !v.secretProblem(name, 'username', namespace) && !v.secretProblem(name, 'password', namespace),
    message: ({ name, namespace }, v) =>
      `role password: ${v.secretProblem(name, 'username', namespace) ?? v.secretProblem(name, 'password', namespace)}`,
  }),
  rule({
    name: 'database-cluster-exists',
    select: { kinds: [DATABASE] },
    require: (o, v) => !!databaseCluster(o, v.objects),
    message: (o) => `cluster ${String((specOf(o)['cluster'] as JsonObject)['name'])}: no such Cluster`,
  }),
  rule({
    name: 'database-owner-is-role',
    select: { kinds: [DATABASE], each: (o, v) => [databaseCluster(o, v.objects)].filter((c) => !!c).map((c) => ({ o, c: c! })) },
    require: ({ o, c }) => clusterRoles(c).includes(String(specOf(o)['owner'])),
    message: ({ o, c }) => `owner ${String(specOf(o)['owner'])} is no role of Cluster ${c.metadata.name} (spec.managed.roles)`,
  }),
];

/** No Secret holds values; what a Service, a disruption budget or an autoscaler selects or targets exists. */
const SELECTOR_RULES: Rule[] = [
  rule({
    name: 'secret-holds-no-values',
    select: { kinds: ['Secret'] },
    require: (o) => !o['data'] && !o['stringData'],
    message: 'holds values: Secrets are created out of band, never committed',
  }),
  rule({
    name: 'service-selects-pods',
    select: { kinds: ['Service'] },
    require: (o, v) => {
      const selector = specOf(o)['selector'] as Record<string, string> | undefined;
      return !!selector && Object.keys(selector).length > 0 && v.podsOf({ matchLabels: selector }, ns(o)).length > 0;
    },
    message: 'its selector matches no pod',
  }),
  rule({
    name: 'service-target-port-declared',
    select: { kinds: ['Service'], each: part.servicePortParts },
    require: ({ pod, target }) => declares(pod.ports, target),
    message: ({ port, target, pod }) =>
      `port ${String(port['name'] ?? port['port'])} targets ${String(target)}, which ${describe(pod.owner)} does not declare`,
  }),
  rule({
    name: 'budget-selects-pods',
    select: { kinds: ['PodDisruptionBudget'] },
    require: (o, v) => v.podsOf(specOf(o)['selector'] as Selector, ns(o)).length > 0,
    message: 'its selector matches no pod',
  }),
  rule({
    name: 'autoscaler-target-exists',
    select: { kinds: ['HorizontalPodAutoscaler'] },
    require: (o, v) => !!scaleTarget(o, v.objects),
    message: (o) => `scaleTargetRef ${String(scaleRef(o)['kind'])}/${String(scaleRef(o)['name'])}: no such object`,
  }),
  rule({
    name: 'autoscaler-owns-replicas',
    select: { kinds: ['HorizontalPodAutoscaler'], each: (o, v) => [scaleTarget(o, v.objects)].filter((t): t is K8sObject => !!t) },
    require: (target) => specOf(target)['replicas'] === undefined,
    message: (target) => `${describe(target)} sets spec.replicas, which every kubectl apply would reset under the autoscaler`,
  }),
];

const scaleRef = (o: K8sObject) => specOf(o)['scaleTargetRef'] as JsonObject;
const scaleTarget = (o: K8sObject, objects: K8sObject[]) =>
  objects.find((x) => x.kind === String(scaleRef(o)['kind']) && x.metadata.name === String(scaleRef(o)['name']) && ns(x) === ns(o));

const NETWORK_RULES: Rule[] = [
  rule({
    name: 'policy-selects-pods',
    select: { kinds: ['NetworkPolicy'] },
    require: (o, v) => v.policyPods(o).length > 0,
    message: 'its podSelector matches no pod',
  }),
  // Another namespace's peers are named by namespace and pods: a namespace as a whole takes in
  // whatever else runs there (the other ingress controller, say); an empty selector, every namespace.
  rule({
    name: 'peer-names-namespace',
    select: { kinds: ['NetworkPolicy'], each: part.namespacePeerParts },
    require: ({ namespaces }) => !isEmpty(namespaces),
    message: ({ direction, peer }) => `${direction} peer ${JSON.stringify(peer)} selects every namespace: name it`,
  }),
  rule({
    name: 'peer-names-pods',
    select: { kinds: ['NetworkPolicy'], each: part.namespacePeerParts },
    require: ({ pods }) => !isEmpty(pods),
    message: ({ direction, namespaces }) =>
      `${direction} peer ${JSON.stringify(namespaces)} takes in every pod of the namespace: name the pods (podSelector)`,
  }),
  rule({
    // Each ingress controller reaches only what its class's Ingresses route to.
    name: 'controller-admitted-only-where-routed',
    select: { kinds: ['NetworkPolicy'], each: part.admissionParts },
    require: ({ cls, pod, port }, v) => v.routes.has(routeKey(cls, pod, port)),
    message: ({ cls, pod, port }) =>
      `ingress admits the ${cls} ingress controller to port ${port} of ${describe(pod.owner)}, which no Ingress of class ${cls} routes to`,
  }),
  rule({
    name: 'pod-peer-matches',
    select: { kinds: ['NetworkPolicy'], each: (o) => part.podPeerParts(o).map((p) => ({ ...p, namespace: ns(o) })) },
    require: ({ selector, namespace }, v) => v.podsOf(selector, namespace).length > 0,
    message: ({ direction, selector }) => `${direction} peer ${JSON.stringify(selector)} matches no pod`,
  }),
  // The port must be open on the pods that receive: the policy's own pods (ingress) or the peers (egress).
  rule({
    name: 'policy-port-declared',
    select: { kinds: ['NetworkPolicy'], each: part.policyPortParts },
    require: ({ port, pod }) => declares(pod.ports, port),
    message: ({ direction, port, pod }) => `${direction} port ${String(port)} is not a port of ${describe(pod.owner)}`,
  }),
];

const INGRESS_RULES: Rule[] = [
  rule({
    name: 'ingress-class-served',
    select: { kinds: ['Ingress'] },
    require: (o, v) => v.controllers.some((c) => c.class === specOf(o)['ingressClassName']),
    message: (o) =>
      `ingressClassName ${String(specOf(o)['ingressClassName'] ?? '(none)')}: no controller serves it in deploy/kubernetes/ingress-controllers.yaml`,
  }),
  rule({
    name: 'tls-secret-exists',
    select: { kinds: ['Ingress'], each: (o) => part.tlsParts(o).map((name) => ({ name, namespace: ns(o) })) },
    require: ({ name, namespace }, v) => !v.secretProblem(name, undefined, namespace),
    message: ({ name, namespace }, v) => `tls: ${v.secretProblem(name, undefined, namespace)}`,
  }),
  rule({
    name: 'backend-service-exists',
    select: { kinds: ['Ingress'], each: (o) => part.backendParts(o).map((b) => ({ ...b, namespace: ns(o) })) },
    require: ({ name, namespace }, v) => !!v.find('Service', name, namespace),
    message: ({ name }) => `backend Service ${name}: no such Service`,
  }),
  rule({
    name: 'backend-port-exists',
    select: { kinds: ['Ingress'], each: (o, v) => part.backendParts(o).flatMap((b) => backendService(b, o, v)) },
    require: ({ svc, port }) => !!servicePort(svc, port),
    message: ({ name, port }) => `backend ${name} port ${String(port['name'] ?? port['number'])}: the Service has no such port`,
  }),
];

const backendService = (b: ReturnType<typeof part.backendParts>[number], o: K8sObject, v: Overlay) => {
  const svc = v.find('Service', b.name, ns(o));
  return svc ? [{ ...b, svc }] : [];
};

/** Rules over the overlay as a whole: what no single object shows. */
const OVERLAY_RULES: Rule[] = [
  rule({
    name: 'route-admitted',
    select: { overlay: (v) => [...v.routes.entries()].map(([key, route]) => ({ key, ...route })), subject: (r) => r.ingress },
    require: ({ key }, v) => v.admitted.has(key),
    message: ({ cls, pod, port }) =>
      `routes to port ${port} of ${describe(pod.owner)}, but no NetworkPolicy admits the ${cls} ingress controller there`,
  }),
  rule({
    name: 'external-secret-referenced',
    select: { overlay: (v) => v.secrets },
    require: (s, v) => v.referencedSecrets.has(s.name),
    message: (s) => `external Secret ${s.name} is documented for this overlay but nothing references it`,
  }),
  rule({
    name: 'namespace-default-deny',
    select: { overlay: (v) => [...new Set(v.pods.map((p) => p.namespace))] },
    require: (n, v) => v.objects.some((o) => isDefaultDeny(o, n)),
    message: (n) => `namespace ${n || '(none)'}: no default-deny NetworkPolicy (ingress and egress)`,
  }),
];

/** Every rule, in the order an object's findings are reported. */
export const POLICY: Rule[] = [
  ...SELECTOR_RULES,
  ...WORKLOAD_REFERENCES,
  ...WORKLOAD_RULES,
  ...POSTGRES_RULES,
  ...NETWORK_RULES,
  ...INGRESS_RULES,
  ...OVERLAY_RULES,
];
