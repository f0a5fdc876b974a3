/**
 * A rendered overlay as the policy's rules see it: its objects, the pods they run (each workload's
 * and each PostgreSQL Cluster's instances), what each ingress controller must reach (the routes of
 * its class's Ingresses) and what the NetworkPolicies let it reach (admissions), the Secrets
 * something references, and lookups of Secrets and ConfigMaps by name and key. Nothing here
 * reports: the rules (policy.ts) decide what is wrong.
 */
import { containers, describe, podSpec, podTemplate, type JsonObject, type K8sObject } from './kustomize';
import { CLUSTER_POD_PORTS, clusterPodLabels, isCluster, roleSecretNames } from './postgres';

/** A Secret created out of band: its name and keys (deploy/kubernetes/external-secrets.yaml). */
export interface ExternalSecret {
  name: string;
  keys: string[];
  overlays: string[];
}

/** An ingress controller installed outside the manifests: the class its Ingresses name, the namespace of its pods and their labels. */
export interface IngressController {
  class: string;
  namespace: string;
  podLabels: Record<string, string>;
}

export type Selector = {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
};

export interface Pod {
  owner: K8sObject;
  namespace: string;
  labels: Record<string, string>;
  /** containerPort numbers and names. */
  ports: Array<{ name?: string; containerPort: number }>;
}

/** Where an ingress controller of class `cls` reaches a pod (`port`: a container port). */
export interface Admission {
  cls: string;
  pod: Pod;
  port: number;
}

/** Where an ingress controller must reach a pod for `ingress`. */
export interface Route extends Admission {
  ingress: K8sObject;
}

export const WORKLOADS = ['Deployment', 'StatefulSet', 'Job', 'DaemonSet'];

export const ns = (o: K8sObject) => o.metadata.namespace ?? '';
export const specOf = (o: K8sObject) => (o['spec'] ?? {}) as JsonObject;
export const list = (value: unknown) => (value as JsonObject[] | undefined) ?? [];
export const templateLabels = (o: K8sObject) =>
  ((podTemplate(o)?.['metadata'] as JsonObject | undefined)?.['labels'] as Record<string, string> | undefined) ?? {};
/** A port as a Service, probe or policy names it: a number is a containerPort, a string a port's name. */
export const declares = (ports: Pod['ports'], port: unknown) =>
  ports.some((x) => (typeof port === 'number' ? x.containerPort === port : x.name === port));
/** Where an ingress controller reaches a pod: the pod's workload and the container port. */
export const routeKey = (cls: string, p: Pod, port: number) => `${cls} ${describe(p.owner)}:${port}`;

export function matches(selector: Selector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  const okLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const okExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (operator === 'In') return key in labels && values.includes(labels[key]);
    if (operator === 'NotIn') return !(key in labels) || !values.includes(labels[key]);
    if (operator === 'Exists') return key in labels;
    if (operator === 'DoesNotExist') return !(key in labels);
    return false;
  });
  return okLabels && okExpressions;
}

export const isEmpty = (selector: Selector | undefined) =>
  !Object.keys(selector?.matchLabels ?? {}).length && !selector?.matchExpressions?.length;

/** A NetworkPolicy of namespace `n` that selects every pod and lets no traffic in or out. */
export function isDefaultDeny(o: K8sObject, n: string): boolean {
  const spec = specOf(o);
  const types = (spec['policyTypes'] as string[] | undefined) ?? [];
  return (
    o.kind === 'NetworkPolicy' &&
    ns(o) === n &&
    !Object.keys((spec['podSelector'] as object | undefined) ?? {}).length &&
    types.includes('Ingress') &&
    types.includes('Egress') &&
    !spec['ingress'] &&
    !spec['egress']
  );
}

/** The pods the overlay runs: each workload's, and each Cluster's instances (pods the operator creates, which policies select and Services reach). */
function renderedPods(objects: K8sObject[]): Pod[] {
  return [
    ...objects
      .filter((o) => WORKLOADS.includes(o.kind))
      .map((o) => ({
        owner: o,
        namespace: ns(o),
        labels: templateLabels(o),
        ports: containers(o).flatMap((c) => (c['ports'] as Pod['ports'] | undefined) ?? []),
      })),
    ...objects.filter(isCluster).map((o) => ({ owner: o, namespace: ns(o), labels: clusterPodLabels(o), ports: CLUSTER_POD_PORTS })),
  ];
}

/**
 * Whether a NetworkPolicy peer of a policy in `namespace` takes in the controller's pods: a
 * namespaceSelector alone is every pod of those namespaces (namespaces carry
 * kubernetes.io/metadata.name), a podSelector alone the pods of the policy's own namespace, and
 * an ipBlock may cover any pod's address.
 */
function peerAdmits(peer: JsonObject, c: IngressController, namespace: string): boolean {
  if (peer['ipBlock']) return true;
  const namespaces = peer['namespaceSelector'] as Selector | undefined;
  const podSelector = peer['podSelector'] as Selector | undefined;
  const inNamespace = namespaces ? matches(namespaces, { 'kubernetes.io/metadata.name': c.namespace }) : c.namespace === namespace;
  return inNamespace && (!podSelector || matches(podSelector, c.podLabels));
}

/** The container ports of `pod` a NetworkPolicy rule opens (no ports: all of them). */
function portsOpened(rule: JsonObject, pod: Pod): number[] {
  const ports = list(rule['ports']);
  const opens = (x: Pod['ports'][number], r: JsonObject) =>
    typeof r['port'] === 'number'
      ? x.containerPort === r['port'] ||
        (typeof r['endPort'] === 'number' && x.containerPort > r['port'] && x.containerPort <= r['endPort'])
      : r['port'] === undefined || x.name === r['port'];
  return pod.ports.filter((x) => !ports.length || ports.some((r) => opens(x, r))).map((x) => x.containerPort);
}

/** The backends of an Ingress: its default backend and each path's. */
function ingressBackends(ingress: K8sObject): JsonObject[] {
  const spec = specOf(ingress);
  return [
    ...(spec['defaultBackend'] ? [spec['defaultBackend'] as JsonObject] : []),
    ...list(spec['rules']).flatMap((r) => list((r['http'] as JsonObject | undefined)?.['paths']).map((p) => p['backend'] as JsonObject)),
  ];
}

/** The port of `service` an Ingress backend names (by name or number). */
export function servicePort(service: K8sObject, wanted: JsonObject | undefined): JsonObject | undefined {
  return list(specOf(service)['ports']).find((p) => (wanted?.['name'] ? p['name'] === wanted['name'] : p['port'] === wanted?.['number']));
}

/** The names of the Secrets the objects reference: from env, envFrom, volumes, Ingress TLS and PostgreSQL roles. */
function referencedSecrets(objects: K8sObject[]): Set<string> {
  const names = objects.flatMap((o) => [
    ...containers(o).flatMap((c) => [
      ...list(c['env']).map((e) => ((e['valueFrom'] as JsonObject | undefined)?.['secretKeyRef'] as JsonObject | undefined)?.['name']),
      ...list(c['envFrom']).map((e) => (e['secretRef'] as JsonObject | undefined)?.['name']),
    ]),
    ...list(podSpec(o)?.['volumes']).map((v) => (v['secret'] as JsonObject | undefined)?.['secretName']),
    ...(o.kind === 'Ingress' ? list(specOf(o)['tls']).map((t) => t['secretName']) : []),
    ...(isCluster(o) ? roleSecretNames(o) : []),
  ]);
  return new Set(names.filter((n) => n !== undefined).map(String));
}

/** A well-formed overlay under validation, with the lookups its rules make. */
export class Overlay {
  readonly pods: Pod[];
  /** The Secrets something references: an external Secret outside this set is documented for nothing. */
  readonly referencedSecrets: Set<string>;
  /** What each ingress controller must reach: the pods and container ports behind its class's Ingresses, by routeKey. */
  readonly routes = new Map<string, Route>();
  /** What each NetworkPolicy's ingress rules let each controller reach, by policy. */
  readonly admissions = new Map<K8sObject, Admission[]>();
  /** The routeKeys some policy admits. */
  readonly admitted = new Set<string>();

  constructor(
    readonly objects: K8sObject[],
    readonly secrets: ExternalSecret[],
    readonly controllers: IngressController[],
  ) {
    this.pods = renderedPods(objects);
    this.referencedSecrets = referencedSecrets(objects);
    for (const o of objects.filter((x) => x.kind === 'Ingress')) this.addRoutes(o);
    for (const o of objects.filter((x) => x.kind === 'NetworkPolicy')) this.addAdmissions(o);
  }

  find(kind: string, name: string, namespace: string): K8sObject | undefined {
    return this.objects.find((o) => o.kind === kind && o.metadata.name === name && ns(o) === namespace);
  }

  podsOf(selector: Selector | undefined, namespace: string): Pod[] {
    return this.pods.filter((p) => p.namespace === namespace && matches(selector, p.labels));
  }

  /** The pods a NetworkPolicy applies to: an empty podSelector is every pod of its namespace. */
  policyPods(policy: K8sObject): Pod[] {
    const selector = specOf(policy)['podSelector'] as Selector | undefined;
    return isEmpty(selector) ? this.pods.filter((p) => p.namespace === ns(policy)) : this.podsOf(selector, ns(policy));
  }

  /** Why a Secret (and, given one, its key) is not there for pods of `namespace`, if it is not. */
  secretProblem(name: string, key: string | undefined, namespace: string): string | undefined {
    const rendered = this.find('Secret', name, namespace);
    if (rendered) {
      const keys = Object.keys({ ...(rendered['data'] as object), ...(rendered['stringData'] as object) });
      return key === undefined || keys.includes(key) ? undefined : `Secret ${name} has no key ${key}`;
    }
    const external = this.secrets.find((s) => s.name === name);
    if (!external) return `Secret ${name} is neither rendered nor in deploy/kubernetes/external-secrets.yaml for this overlay`;
    return key === undefined || external.keys.includes(key) ? undefined : `Secret ${name} (external) has no documented key ${key}`;
  }

  /** Why a ConfigMap (and, given one, its key) is not there for pods of `namespace`, if it is not. */
  configMapProblem(name: string, key: string | undefined, namespace: string): string | undefined {
    const cm = this.find('ConfigMap', name, namespace);
    if (!cm) return `ConfigMap ${name} is not rendered`;
    return key === undefined || key in ((cm['data'] as object) ?? {}) ? undefined : `ConfigMap ${name} has no key ${key}`;
  }

  /** The variables an envFrom source defines, where they are known (a rendered ConfigMap or Secret, or an external Secret's documented keys). */
  envFromKeys(source: JsonObject, namespace: string): string[] {
    const prefix = String(source['prefix'] ?? '');
    const kind = source['configMapRef'] ? 'ConfigMap' : 'Secret';
    const name = String(((source['configMapRef'] ?? source['secretRef']) as JsonObject | undefined)?.['name']);
    const rendered = this.find(kind, name, namespace);
    const keys = rendered
      ? Object.keys({ ...(rendered['data'] as object), ...(rendered['stringData'] as object) })
      : kind === 'Secret'
        ? (this.secrets.find((x) => x.name === name)?.keys ?? [])
        : [];
    return keys.map((k) => prefix + k);
  }

  /** The pods and container ports an Ingress's backends reach through their Services, as routes of its class (if a controller serves it). */
  private addRoutes(ingress: K8sObject): void {
    const cls = specOf(ingress)['ingressClassName'] as string | undefined;
    if (!cls || !this.controllers.some((c) => c.class === cls)) return;
    for (const backend of ingressBackends(ingress)) {
      const ref = backend['service'] as JsonObject | undefined;
      const svc = ref && this.find('Service', String(ref['name']), ns(ingress));
      const port = svc && servicePort(svc, ref['port'] as JsonObject | undefined);
      if (!svc || !port) continue; // a rule reports it with the Ingress
      const target = port['targetPort'] ?? port['port'];
      const selector = specOf(svc)['selector'] as Record<string, string> | undefined;
      for (const pod of selector ? this.podsOf({ matchLabels: selector }, ns(ingress)) : [])
        for (const x of pod.ports.filter((x) => declares([x], target)))
          this.routes.set(routeKey(cls, pod, x.containerPort), { cls, ingress, pod, port: x.containerPort });
    }
  }

  /** What a NetworkPolicy's ingress rules let each controller reach: its own pods, on the ports a rule opens to peers that take the controller in. */
  private addAdmissions(policy: K8sObject): void {
    const own = this.policyPods(policy);
    const admitted: Admission[] = [];
    for (const rule of list(specOf(policy)['ingress'])) {
      const from = rule['from'] as JsonObject[] | undefined;
      for (const c of this.controllers.filter((c) => !from?.length || from.some((peer) => peerAdmits(peer, c, ns(policy)))))
        for (const pod of own) for (const port of portsOpened(rule, pod)) admitted.push({ cls: c.class, pod, port });
    }
    for (const a of admitted) this.admitted.add(routeKey(a.cls, a.pod, a.port));
    this.admissions.set(policy, admitted);
  }
}
