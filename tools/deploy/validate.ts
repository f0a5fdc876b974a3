/**
 * Validates a rendered overlay: every object against the Kubernetes schema (schemas.ts), then what
 * a schema cannot see — references between objects, which the API server accepts dangling and
 * which then fail at run time (a Service that selects no pod, a probe on a port that does not
 * exist, an env var from a Secret nobody creates) — and the platform's own rules for its
 * workloads (probes, drain, non-root, read-only root, a budget for disruptions, deny by default,
 * each ingress controller admitted to its own Ingresses' backends only) and for the in-cluster
 * PostgreSQL (a CloudNativePG Cluster with a synchronous standby, which the services reach through
 * its read-write Service).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { STOP_DEADLINE_MS } from '@trading/config';
import { containers, DEPLOY_ROOT, describe, podSpec, podTemplate, type JsonObject, type K8sObject } from './kustomize';
import { schemaProblems } from './schemas';

/** A Secret created out of band: its name and keys (deploy/kubernetes/external-secrets.yaml). */
export interface ExternalSecret {
  name: string;
  keys: string[];
  overlays: string[];
}

export function externalSecrets(overlay?: string): ExternalSecret[] {
  const doc = parse(readFileSync(join(DEPLOY_ROOT, 'kubernetes/external-secrets.yaml'), 'utf8')) as { secrets: ExternalSecret[] };
  return doc.secrets.filter((s) => !overlay || s.overlays.includes(overlay));
}

/**
 * An ingress controller installed outside the manifests (deploy/kubernetes/ingress-controllers.yaml):
 * the class its Ingresses name, the namespace of its pods and their labels.
 */
export interface IngressController {
  class: string;
  namespace: string;
  podLabels: Record<string, string>;
}

export function ingressControllers(): IngressController[] {
  const doc = parse(readFileSync(join(DEPLOY_ROOT, 'kubernetes/ingress-controllers.yaml'), 'utf8')) as {
    controllers: IngressController[];
  };
  return doc.controllers;
}

interface Pod {
  owner: K8sObject;
  namespace: string;
  labels: Record<string, string>;
  /** containerPort numbers and names. */
  ports: Array<{ name?: string; containerPort: number }>;
}

type Selector = { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> };

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

const WORKLOADS = ['Deployment', 'StatefulSet', 'Job', 'DaemonSet'];

/** The CloudNativePG operator's API: a Cluster's pods and Services are its doing, never rendered. */
const CNPG = 'postgresql.cnpg.io/v1';
const isCluster = (o: K8sObject) => o.apiVersion === CNPG && o.kind === 'Cluster';

/** The labels the operator gives a Cluster's instance pods (with the Cluster's inheritedMetadata labels). */
function clusterPodLabels(cluster: K8sObject): Record<string, string> {
  const inherited = ((cluster['spec'] as JsonObject)['inheritedMetadata'] as JsonObject | undefined)?.['labels'] as
    | Record<string, string>
    | undefined;
  return { ...inherited, 'cnpg.io/cluster': cluster.metadata.name, 'cnpg.io/podRole': 'instance' };
}

/** An instance pod's container ports: PostgreSQL, the metrics exporter, the instance manager's status (which the operator polls). */
const CLUSTER_POD_PORTS = [
  { name: 'postgresql', containerPort: 5432 },
  { name: 'metrics', containerPort: 9187 },
  { name: 'status', containerPort: 8000 },
];

/** The roles a Cluster creates: its managed roles (not ensured absent) and the owner of the database initdb creates. */
function clusterRoles(cluster: K8sObject): string[] {
  const spec = cluster['spec'] as JsonObject;
  const managed = (((spec['managed'] as JsonObject | undefined)?.['roles'] as JsonObject[] | undefined) ?? [])
    .filter((r) => r['ensure'] !== 'absent')
    .map((r) => String(r['name']));
  const owner = (((spec['bootstrap'] as JsonObject | undefined)?.['initdb'] as JsonObject | undefined)?.['owner'] as string) ?? 'app';
  return [...new Set([...managed, owner])];
}

const isEmpty = (selector: Selector | undefined) => !Object.keys(selector?.matchLabels ?? {}).length && !selector?.matchExpressions?.length;

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
  const ports = (rule['ports'] as JsonObject[] | undefined) ?? [];
  return pod.ports
    .filter(
      (x) =>
        !ports.length ||
        ports.some((r) =>
          typeof r['port'] === 'number'
            ? x.containerPort === r['port'] ||
              (typeof r['endPort'] === 'number' && x.containerPort > r['port'] && x.containerPort <= r['endPort'])
            : r['port'] === undefined || x.name === r['port'],
        ),
    )
    .map((x) => x.containerPort);
}

type Route = { ingress: K8sObject; pod: Pod; port: number };

const ns = (o: K8sObject) => o.metadata.namespace ?? '';
const hasPort = (p: Pod, port: unknown) => p.ports.some((x) => (typeof port === 'number' ? x.containerPort === port : x.name === port));
/** Where an ingress controller reaches a pod: the pod's workload and the container port. */
const routeKey = (p: Pod, port: number) => `${describe(p.owner)}:${port}`;

/** The pods the overlay runs: each workload's, and each Cluster's instances. */
function renderedPods(objects: K8sObject[]): Pod[] {
  return [
    ...objects
      .filter((o) => WORKLOADS.includes(o.kind))
      .map((o) => ({
        owner: o,
        namespace: ns(o),
        labels: ((podTemplate(o)?.['metadata'] as JsonObject | undefined)?.['labels'] as Record<string, string>) ?? {},
        ports: containers(o).flatMap((c) => (c['ports'] as Pod['ports']) ?? []),
      })),
    // A Cluster's instances: pods the operator creates, which policies select and services connect to.
    ...objects.filter(isCluster).map((o) => ({ owner: o, namespace: ns(o), labels: clusterPodLabels(o), ports: CLUSTER_POD_PORTS })),
  ];
}

/** A well-formed overlay under validation: lookups into its objects, and what the checks have found so far. */
class Overlay {
  readonly problems: string[] = [];
  readonly pods: Pod[];
  /** The Secrets something references: an external Secret outside this set is documented for nothing. */
  readonly referencedSecrets = new Set<string>();
  /** What each ingress controller must reach, by class: the pods and container ports behind its Ingresses. */
  readonly routes = new Map<string, Map<string, Route>>();
  /** class + routeKey: a controller some policy admits there. */
  readonly admitted = new Set<string>();

  constructor(
    readonly objects: K8sObject[],
    readonly secrets: ExternalSecret[],
    readonly controllers: IngressController[],
  ) {
    this.pods = renderedPods(objects);
  }

  report(o: K8sObject, msg: string): void {
    this.problems.push(`${describe(o)}: ${msg}`);
  }

  find(kind: string, name: string, namespace: string): K8sObject | undefined {
    return this.objects.find((o) => o.kind === kind && o.metadata.name === name && ns(o) === namespace);
  }

  podsOf(selector: Selector | undefined, namespace: string): Pod[] {
    return this.pods.filter((p) => p.namespace === namespace && matches(selector, p.labels));
  }

  secretHas(name: string, key: string | undefined, namespace: string): string | undefined {
    const rendered = this.find('Secret', name, namespace);
    if (rendered) {
      const keys = Object.keys({ ...(rendered['data'] as object), ...(rendered['stringData'] as object) });
      return key === undefined || keys.includes(key) ? undefined : `Secret ${name} has no key ${key}`;
    }
    const external = this.secrets.find((s) => s.name === name);
    if (!external) return `Secret ${name} is neither rendered nor in deploy/kubernetes/external-secrets.yaml for this overlay`;
    return key === undefined || external.keys.includes(key) ? undefined : `Secret ${name} (external) has no documented key ${key}`;
  }

  configMapHas(name: string, key: string | undefined, namespace: string): string | undefined {
    const cm = this.find('ConfigMap', name, namespace);
    if (!cm) return `ConfigMap ${name} is not rendered`;
    return key === undefined || key in ((cm['data'] as object) ?? {}) ? undefined : `ConfigMap ${name} has no key ${key}`;
  }
}

/** Every problem of the rendered `objects`, each prefixed with the object it is in; none when the overlay is sound. */
export function validateObjects(
  objects: K8sObject[],
  secrets: ExternalSecret[],
  controllers: IngressController[] = ingressControllers(),
): string[] {
  const malformed = objects.flatMap((o) => schemaProblems(o).map((p) => `${describe(o)}: ${p}`));
  if (malformed.length) return malformed; // references are only worth following in well-formed objects

  const v = new Overlay(objects, secrets, controllers);
  collectRoutes(v);
  for (const o of objects) checkObject(v, o);
  reportUnadmittedRoutes(v);
  for (const s of secrets)
    if (!v.referencedSecrets.has(s.name))
      v.problems.push(`external Secret ${s.name} is documented for this overlay but nothing references it`);
  for (const n of new Set(v.pods.map((p) => p.namespace)))
    if (!objects.some((o) => isDefaultDeny(o, n)))
      v.problems.push(`namespace ${n || '(none)'}: no default-deny NetworkPolicy (ingress and egress)`);
  return v.problems;
}

/** The rules each kind of object is held to, in the order they report. */
function checkObject(v: Overlay, o: K8sObject): void {
  const namespace = ns(o);
  const spec = (o['spec'] ?? {}) as JsonObject;
  if (o.kind === 'Secret' && (o['data'] || o['stringData'])) v.report(o, 'holds values: Secrets are created out of band, never committed');
  if (WORKLOADS.includes(o.kind)) checkWorkload(v, o, spec, namespace);
  if (o.kind === 'Service') checkService(v, o, spec, namespace);
  if (isCluster(o)) checkCluster(v, o, spec, namespace);
  if (o.apiVersion === CNPG && o.kind === 'Database') checkDatabase(v, o, spec, namespace);
  if (o.kind === 'PodDisruptionBudget' && !v.podsOf(spec['selector'] as Selector, namespace).length)
    v.report(o, 'its selector matches no pod');
  if (o.kind === 'HorizontalPodAutoscaler') checkAutoscaler(v, o, spec, namespace);
  if (o.kind === 'NetworkPolicy') checkNetworkPolicy(v, o, spec, namespace);
  if (o.kind === 'Ingress') checkIngress(v, o, spec, namespace);
}

/** Records what each Ingress's controller must reach; an Ingress of a class no controller serves is a problem. */
function collectRoutes(v: Overlay): void {
  for (const o of v.objects.filter((x) => x.kind === 'Ingress')) {
    const spec = o['spec'] as JsonObject;
    const cls = spec['ingressClassName'] as string | undefined;
    if (!v.controllers.some((c) => c.class === cls)) {
      v.report(o, `ingressClassName ${cls ?? '(none)'}: no controller serves it in deploy/kubernetes/ingress-controllers.yaml`);
      continue;
    }
    const backends = [
      ...(spec['defaultBackend'] ? [spec['defaultBackend'] as JsonObject] : []),
      ...((spec['rules'] as JsonObject[]) ?? []).flatMap((r) =>
        (((r['http'] as JsonObject)?.['paths'] as JsonObject[]) ?? []).map((p) => p['backend'] as JsonObject),
      ),
    ];
    for (const backend of backends) addRoutes(v, o, cls!, backend);
  }
}

/** The pods and container ports an Ingress backend reaches through its Service, as routes of the class. */
function addRoutes(v: Overlay, ingress: K8sObject, cls: string, backend: JsonObject): void {
  const ref = backend['service'] as JsonObject | undefined;
  const svc = ref && v.find('Service', String(ref['name']), ns(ingress));
  const wanted = ref?.['port'] as JsonObject | undefined;
  const port =
    svc &&
    ((svc['spec'] as JsonObject)['ports'] as JsonObject[]).find((p) =>
      wanted?.['name'] ? p['name'] === wanted['name'] : p['port'] === wanted?.['number'],
    );
  if (!svc || !port) return; // reported with the Ingress
  const target = port['targetPort'] ?? port['port'];
  const selector = (svc['spec'] as JsonObject)['selector'] as Record<string, string> | undefined;
  for (const pod of selector ? v.podsOf({ matchLabels: selector }, ns(ingress)) : [])
    for (const x of pod.ports.filter((x) => (typeof target === 'number' ? x.containerPort === target : x.name === target))) {
      if (!v.routes.has(cls)) v.routes.set(cls, new Map());
      v.routes.get(cls)!.set(routeKey(pod, x.containerPort), { ingress, pod, port: x.containerPort });
    }
}

/** A route no NetworkPolicy opens: the controller's requests would be dropped. */
function reportUnadmittedRoutes(v: Overlay): void {
  for (const [cls, reached] of v.routes)
    for (const [k, { ingress, pod, port }] of reached)
      if (!v.admitted.has(`${cls} ${k}`))
        v.report(
          ingress,
          `routes to port ${port} of ${describe(pod.owner)}, but no NetworkPolicy admits the ${cls} ingress controller there`,
        );
}

/** A NetworkPolicy of namespace `n` that selects every pod and lets no traffic in or out. */
function isDefaultDeny(o: K8sObject, n: string): boolean {
  const spec = o['spec'] as JsonObject;
  const types = (spec?.['policyTypes'] as string[]) ?? [];
  return (
    o.kind === 'NetworkPolicy' &&
    ns(o) === n &&
    !Object.keys((spec['podSelector'] as object) ?? {}).length &&
    types.includes('Ingress') &&
    types.includes('Egress') &&
    !spec['ingress'] &&
    !spec['egress']
  );
}

/** A workload's references (selector, account, containers, volumes, spread), then the platform's rules for it. */
function checkWorkload(v: Overlay, o: K8sObject, spec: JsonObject, namespace: string): void {
  const pod = podSpec(o)!;
  const labels = ((podTemplate(o)!['metadata'] as JsonObject | undefined)?.['labels'] as Record<string, string>) ?? {};
  if (o.kind !== 'Job' && !matches(spec['selector'] as Selector, labels))
    v.report(o, "its selector does not match its own pod template's labels");
  const account = pod['serviceAccountName'] as string | undefined;
  if (account && !v.find('ServiceAccount', account, namespace)) v.report(o, `serviceAccountName ${account}: no such ServiceAccount`);
  for (const c of containers(o)) checkContainer(v, o, spec, pod, c);
  for (const vol of (pod['volumes'] as JsonObject[]) ?? []) checkVolume(v, o, vol);
  for (const t of (pod['topologySpreadConstraints'] as JsonObject[]) ?? []) {
    if (!matches(t['labelSelector'] as Selector, labels))
      v.report(o, `topology spread on ${String(t['topologyKey'])} selects other pods than its own`);
  }
  v.problems.push(...workloadRules(o, v.objects).map((p) => `${describe(o)}: ${p}`));
}

/** A container's references: the ports its probes name, its environment, its mounts. */
function checkContainer(v: Overlay, o: K8sObject, spec: JsonObject, pod: JsonObject, c: JsonObject): void {
  const where = `container ${String(c['name'])}`;
  const ports = (c['ports'] as Pod['ports']) ?? [];
  for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
    const handler = c[probe] as JsonObject | undefined;
    const port = ((handler?.['httpGet'] ?? handler?.['tcpSocket']) as JsonObject | undefined)?.['port'];
    if (port !== undefined && !ports.some((p) => (typeof port === 'number' ? p.containerPort === port : p.name === port))) {
      v.report(o, `${where} ${probe} names port ${String(port)}, which the container does not declare`);
    }
  }
  checkEnv(v, o, where, c);
  checkEnvFrom(v, o, where, c);
  const volumes = ((pod['volumes'] as JsonObject[]) ?? []).map((x) => x['name']);
  const claims = ((spec['volumeClaimTemplates'] as JsonObject[]) ?? []).map((x) => (x['metadata'] as JsonObject)?.['name']);
  for (const m of (c['volumeMounts'] as JsonObject[]) ?? []) {
    if (!volumes.includes(m['name']) && !claims.includes(m['name']))
      v.report(o, `${where} mounts ${String(m['name'])}, which is no volume of the pod`);
  }
}

function checkEnv(v: Overlay, o: K8sObject, where: string, c: JsonObject): void {
  const namespace = ns(o);
  // Kubernetes expands $(NAME) only from variables defined before it (envFrom's come first); anything else stays as written.
  const defined = new Set<string>(((c['envFrom'] as JsonObject[]) ?? []).flatMap((e) => envFromKeys(e, v.objects, v.secrets, namespace)));
  for (const e of (c['env'] as JsonObject[]) ?? []) {
    const what = `${where} env ${String(e['name'])}`;
    if (typeof e['value'] === 'string')
      for (const [, ref] of e['value'].matchAll(/(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g))
        if (!defined.has(ref!)) v.report(o, `${what}: $(${ref}) is not defined before it, so it is never expanded`);
    defined.add(String(e['name']));
    checkEnvSource(v, o, what, e);
  }
}

/** Where an env var's value comes from: a database URL written out, or a key of a Secret or ConfigMap. */
function checkEnvSource(v: Overlay, o: K8sObject, what: string, e: JsonObject): void {
  const namespace = ns(o);
  if (/DATABASE_URL$/.test(String(e['name'])) && typeof e['value'] === 'string') {
    const clusters = v.objects.filter((x) => isCluster(x) && ns(x) === namespace);
    const wrong = databaseUrlProblem(e['value'], clusters, v.objects, namespace);
    if (wrong) v.report(o, `${what}: ${wrong}`);
  }
  const from = e['valueFrom'] as JsonObject | undefined;
  const sk = from?.['secretKeyRef'] as JsonObject | undefined;
  const ck = from?.['configMapKeyRef'] as JsonObject | undefined;
  if (sk) v.referencedSecrets.add(String(sk['name']));
  // An optional key may be absent (the variable is then unset), but its ConfigMap must be rendered.
  const wrong = sk
    ? v.secretHas(String(sk['name']), String(sk['key']), namespace)
    : ck
      ? v.configMapHas(String(ck['name']), ck['optional'] === true ? undefined : String(ck['key']), namespace)
      : undefined;
  if (wrong) v.report(o, `${what}: ${wrong}`);
}

function checkEnvFrom(v: Overlay, o: K8sObject, where: string, c: JsonObject): void {
  for (const e of (c['envFrom'] as JsonObject[]) ?? []) {
    const s = e['secretRef'] as JsonObject | undefined;
    const m = e['configMapRef'] as JsonObject | undefined;
    if (s) v.referencedSecrets.add(String(s['name']));
    const wrong = s
      ? v.secretHas(String(s['name']), undefined, ns(o))
      : m
        ? v.configMapHas(String(m['name']), undefined, ns(o))
        : undefined;
    if (wrong) v.report(o, `${where} envFrom: ${wrong}`);
  }
}

function checkVolume(v: Overlay, o: K8sObject, vol: JsonObject): void {
  const cm = vol['configMap'] as JsonObject | undefined;
  const s = vol['secret'] as JsonObject | undefined;
  if (s) v.referencedSecrets.add(String(s['secretName']));
  const wrong = cm
    ? v.configMapHas(String(cm['name']), undefined, ns(o))
    : s
      ? v.secretHas(String(s['secretName']), undefined, ns(o))
      : undefined;
  if (wrong) v.report(o, `volume ${String(vol['name'])}: ${wrong}`);
}

function checkService(v: Overlay, o: K8sObject, spec: JsonObject, namespace: string): void {
  const selector = spec['selector'] as Record<string, string> | undefined;
  const selected = selector && Object.keys(selector).length ? v.podsOf({ matchLabels: selector }, namespace) : [];
  if (!selected.length) v.report(o, 'its selector matches no pod');
  for (const port of (spec['ports'] as JsonObject[]) ?? []) {
    const target = port['targetPort'] ?? port['port'];
    for (const p of selected)
      if (!hasPort(p, target))
        v.report(o, `port ${String(port['name'] ?? port['port'])} targets ${String(target)}, which ${describe(p.owner)} does not declare`);
  }
}

function checkCluster(v: Overlay, o: K8sObject, spec: JsonObject, namespace: string): void {
  for (const p of clusterRules(o)) v.report(o, p);
  const roleSecrets = [
    ...(((spec['managed'] as JsonObject | undefined)?.['roles'] as JsonObject[] | undefined) ?? []).map(
      (r) => (r['passwordSecret'] as JsonObject | undefined)?.['name'],
    ),
    ((((spec['bootstrap'] as JsonObject | undefined)?.['initdb'] as JsonObject | undefined)?.['secret'] as JsonObject | undefined) ?? {})[
      'name'
    ],
  ].filter((name): name is string => typeof name === 'string');
  for (const name of new Set(roleSecrets)) {
    v.referencedSecrets.add(name);
    // The operator reads a role's credentials from a kubernetes.io/basic-auth Secret.
    const wrong = v.secretHas(name, 'username', namespace) ?? v.secretHas(name, 'password', namespace);
    if (wrong) v.report(o, `role password: ${wrong}`);
  }
}

function checkDatabase(v: Overlay, o: K8sObject, spec: JsonObject, namespace: string): void {
  const clusterName = String((spec['cluster'] as JsonObject)['name']);
  const cluster = v.objects.find((x) => isCluster(x) && x.metadata.name === clusterName && ns(x) === namespace);
  if (!cluster) v.report(o, `cluster ${clusterName}: no such Cluster`);
  else if (!clusterRoles(cluster).includes(String(spec['owner'])))
    v.report(o, `owner ${String(spec['owner'])} is no role of Cluster ${clusterName} (spec.managed.roles)`);
}

function checkAutoscaler(v: Overlay, o: K8sObject, spec: JsonObject, namespace: string): void {
  const ref = spec['scaleTargetRef'] as JsonObject;
  const target = v.find(String(ref['kind']), String(ref['name']), namespace);
  if (!target) v.report(o, `scaleTargetRef ${String(ref['kind'])}/${String(ref['name'])}: no such object`);
  else if ((target['spec'] as JsonObject)['replicas'] !== undefined)
    v.report(o, `${describe(target)} sets spec.replicas, which every kubectl apply would reset under the autoscaler`);
}

function checkNetworkPolicy(v: Overlay, o: K8sObject, spec: JsonObject, namespace: string): void {
  const selector = spec['podSelector'] as Selector;
  const own =
    Object.keys(selector.matchLabels ?? {}).length || selector.matchExpressions?.length
      ? v.podsOf(selector, namespace)
      : v.pods.filter((p) => p.namespace === namespace);
  if (!own.length) v.report(o, 'its podSelector matches no pod');
  for (const [direction, peersKey] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    for (const rule of (spec[direction] as JsonObject[]) ?? [])
      checkPolicyRule(v, o, own, direction, (rule[peersKey] as JsonObject[]) ?? [], rule);
  }
}

/** One ingress or egress rule of a NetworkPolicy whose own pods are `own`; `peers` are its from (ingress) or to (egress). */
function checkPolicyRule(
  v: Overlay,
  o: K8sObject,
  own: Pod[],
  direction: 'ingress' | 'egress',
  peers: JsonObject[],
  rule: JsonObject,
): void {
  const namespace = ns(o);
  // Another namespace's peers are named by namespace and pods: a namespace as a whole takes in
  // whatever else runs there (the other ingress controller, say); an empty selector, every namespace.
  for (const peer of peers) {
    const namespaces = peer['namespaceSelector'] as Selector | undefined;
    if (!namespaces) continue;
    if (isEmpty(namespaces)) v.report(o, `${direction} peer ${JSON.stringify(peer)} selects every namespace: name it`);
    if (isEmpty(peer['podSelector'] as Selector | undefined))
      v.report(o, `${direction} peer ${JSON.stringify(namespaces)} takes in every pod of the namespace: name the pods (podSelector)`);
  }
  if (direction === 'ingress') admitControllers(v, o, own, rule);
  const podPeers = peers.filter((peer) => peer['podSelector'] && !peer['namespaceSelector']);
  for (const peer of podPeers)
    if (!v.podsOf(peer['podSelector'] as Selector, namespace).length)
      v.report(o, `${direction} peer ${JSON.stringify(peer['podSelector'])} matches no pod`);
  // The port must be open on the pods that receive: the policy's own pods (ingress) or the peers (egress).
  const receivers = direction === 'ingress' ? own : podPeers.flatMap((peer) => v.podsOf(peer['podSelector'] as Selector, namespace));
  for (const port of (rule['ports'] as JsonObject[]) ?? []) {
    for (const p of receivers)
      if (!hasPort(p, port['port'])) v.report(o, `${direction} port ${String(port['port'])} is not a port of ${describe(p.owner)}`);
  }
}

/** Each ingress controller reaches only what its class's Ingresses route to: records what an ingress rule admits, and reports the rest. */
function admitControllers(v: Overlay, o: K8sObject, own: Pod[], rule: JsonObject): void {
  const from = rule['from'] as JsonObject[] | undefined;
  for (const c of v.controllers.filter((c) => !from?.length || from.some((peer) => peerAdmits(peer, c, ns(o)))))
    for (const p of own)
      for (const port of portsOpened(rule, p)) {
        v.admitted.add(`${c.class} ${routeKey(p, port)}`);
        if (!v.routes.get(c.class)?.has(routeKey(p, port)))
          v.report(
            o,
            `ingress admits the ${c.class} ingress controller to port ${port} of ${describe(p.owner)}, which no Ingress of class ${c.class} routes to`,
          );
      }
}

function checkIngress(v: Overlay, o: K8sObject, spec: JsonObject, namespace: string): void {
  for (const t of (spec['tls'] as JsonObject[]) ?? []) {
    v.referencedSecrets.add(String(t['secretName']));
    const wrong = v.secretHas(String(t['secretName']), undefined, namespace);
    if (wrong) v.report(o, `tls: ${wrong}`);
  }
  for (const rule of (spec['rules'] as JsonObject[]) ?? []) {
    for (const path of ((rule['http'] as JsonObject)?.['paths'] as JsonObject[]) ?? []) {
      const backend = (path['backend'] as JsonObject)['service'] as JsonObject;
      const svc = v.find('Service', String(backend['name']), namespace);
      const port = backend['port'] as JsonObject;
      if (!svc) v.report(o, `backend Service ${String(backend['name'])}: no such Service`);
      else if (
        !((svc['spec'] as JsonObject)['ports'] as JsonObject[]).some((p) =>
          port['name'] ? p['name'] === port['name'] : p['port'] === port['number'],
        )
      ) {
        v.report(o, `backend ${String(backend['name'])} port ${String(port['name'] ?? port['number'])}: the Service has no such port`);
      }
    }
  }
}

/** The variables an envFrom source defines, where they are known (a rendered ConfigMap or Secret, or an external Secret's documented keys). */
function envFromKeys(source: JsonObject, objects: K8sObject[], secrets: ExternalSecret[], namespace: string): string[] {
  const prefix = String(source['prefix'] ?? '');
  const ref = (source['configMapRef'] ?? source['secretRef']) as JsonObject | undefined;
  const kind = source['configMapRef'] ? 'ConfigMap' : 'Secret';
  const rendered = objects.find((o) => o.kind === kind && o.metadata.name === ref?.['name'] && (o.metadata.namespace ?? '') === namespace);
  const keys = rendered
    ? Object.keys({ ...(rendered['data'] as object), ...(rendered['stringData'] as object) })
    : kind === 'Secret'
      ? (secrets.find((x) => x.name === ref?.['name'])?.keys ?? [])
      : [];
  return keys.map((k) => prefix + k);
}

/**
 * The platform's rules for the in-cluster PostgreSQL: a failover must never lose a commit the
 * services were told succeeded, so a commit waits for a synchronous standby, and there are enough
 * instances for one to be there; and the same resource rules as the platform's workloads.
 */
function clusterRules(o: K8sObject): string[] {
  const spec = o['spec'] as JsonObject;
  const problems = synchronousProblems(spec);
  const storage = (spec['storage'] ?? {}) as JsonObject;
  if (!storage['size'] && !storage['pvcTemplate']) problems.push('spec.storage has no size: the instances would have no volume');
  problems.push(...resourceProblems((spec['resources'] ?? {}) as JsonObject, 'spec.resources'));
  return problems;
}

/** A commit waits for a synchronous standby, and there are enough instances for one. */
function synchronousProblems(spec: JsonObject): string[] {
  const problems: string[] = [];
  const instances = Number(spec['instances'] ?? 1);
  const synchronous = (spec['postgresql'] as JsonObject | undefined)?.['synchronous'] as JsonObject | undefined;
  if (instances < 2) problems.push(`spec.instances is ${instances}: a synchronous standby needs at least two instances`);
  if (spec['minSyncReplicas'] !== undefined || spec['maxSyncReplicas'] !== undefined)
    problems.push('minSyncReplicas/maxSyncReplicas are deprecated: set spec.postgresql.synchronous (method, number)');
  if (!synchronous)
    problems.push(
      'no synchronous replication (spec.postgresql.synchronous): a commit would return before any standby has it, and a failover could lose it',
    );
  else if (Number(synchronous['number']) > instances - 1)
    problems.push(
      `spec.postgresql.synchronous.number ${String(synchronous['number'])} is more than its ${instances - 1} standby(s): no commit could complete`,
    );
  return problems;
}

/** CPU and memory requests (what the scheduler places by) and a memory limit, for a container or a Cluster's instances (`where`). */
function resourceProblems(resources: JsonObject, where: string): string[] {
  const problems: string[] = [];
  if (!(resources['requests'] as JsonObject)?.['cpu'] || !(resources['requests'] as JsonObject)?.['memory'])
    problems.push(`${where}: no CPU and memory requests`);
  if (!(resources['limits'] as JsonObject)?.['memory']) problems.push(`${where}: no memory limit`);
  return problems;
}

/**
 * Why a database URL written in the manifests is wrong, if it is: it must reach a Cluster of its
 * namespace through the read-write Service (`<cluster>-rw`, the primary, whichever instance that
 * is after a failover), as a role the Cluster creates, into a database it has. An external
 * server's URL belongs in the service's Secret instead.
 */
function databaseUrlProblem(value: string, clusters: K8sObject[], objects: K8sObject[], namespace: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.replace(/\$\([A-Za-z0-9_]+\)/g, 'x'));
  } catch {
    return 'not a URL';
  }
  // Short names and names qualified by the namespace reach the same Service.
  const host = url.hostname.replace(new RegExp(`\\.${namespace}(\\.svc(\\.cluster\\.local)?)?$`), '');
  const cluster = clusters.find((c) => [`${c.metadata.name}-rw`, `${c.metadata.name}-ro`, `${c.metadata.name}-r`].includes(host));
  if (!cluster)
    return `connects to ${host}, which is no PostgreSQL Cluster's read-write Service (<cluster>-rw); an external server's URL belongs in the service's Secret`;
  const name = cluster.metadata.name;
  if (host !== `${name}-rw`) return `connects to ${host}, a Service of Cluster ${name}'s standbys, where writes fail: use ${name}-rw`;
  const user = decodeURIComponent(url.username);
  if (!clusterRoles(cluster).includes(user)) return `connects as ${user || '(no user)'}, which is no role of Cluster ${name}`;
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const initdb = (((cluster['spec'] as JsonObject)['bootstrap'] as JsonObject | undefined)?.['initdb'] as JsonObject | undefined)?.[
    'database'
  ];
  const databases = [
    (initdb as string | undefined) ?? 'app',
    ...objects
      .filter(
        (d) =>
          d.apiVersion === CNPG &&
          d.kind === 'Database' &&
          (d.metadata.namespace ?? '') === namespace &&
          ((d['spec'] as JsonObject)['cluster'] as JsonObject)['name'] === name &&
          (d['spec'] as JsonObject)['ensure'] !== 'absent',
      )
      .map((d) => String((d['spec'] as JsonObject)['name'])),
  ];
  if (!databases.includes(database))
    return `names database ${database || '(none)'}, which Cluster ${name} does not create (a Database object)`;
  return undefined;
}

/** The platform's rules for a workload: what a cluster would accept but we do not ship. */
function workloadRules(o: K8sObject, objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const pod = podSpec(o)!;
  if (pod['automountServiceAccountToken'] !== false)
    problems.push('automountServiceAccountToken must be false (no app calls the Kubernetes API)');
  for (const c of containers(o)) problems.push(...containerRules(o, pod, c));
  if (o.kind === 'Deployment' && !hasDisruptionBudget(o, objects)) problems.push('no PodDisruptionBudget selects its pods');
  return problems;
}

/** Non-root, read-only, no escalation, bounded resources, probes; and for a Deployment, a drain that ends before SIGKILL. */
function containerRules(o: K8sObject, pod: JsonObject, c: JsonObject): string[] {
  const problems: string[] = [];
  const where = `container ${String(c['name'])}`;
  const podSecurity = (pod['securityContext'] ?? {}) as JsonObject;
  const sc = (c['securityContext'] ?? {}) as JsonObject;
  if ((sc['runAsNonRoot'] ?? podSecurity['runAsNonRoot']) !== true) problems.push(`${where}: runAsNonRoot is not set`);
  if (sc['readOnlyRootFilesystem'] !== true) problems.push(`${where}: readOnlyRootFilesystem is not set`);
  if (sc['allowPrivilegeEscalation'] !== false) problems.push(`${where}: allowPrivilegeEscalation is not false`);
  problems.push(...resourceProblems((c['resources'] ?? {}) as JsonObject, where));
  if (!c['livenessProbe'] || !c['readinessProbe']) problems.push(`${where}: needs a liveness and a readiness probe`);
  if (o.kind === 'Deployment') problems.push(...drainProblems(pod, c, where));
  return problems;
}

function drainProblems(pod: JsonObject, c: JsonObject, where: string): string[] {
  const sleep = Number(
    ((((c['lifecycle'] as JsonObject)?.['preStop'] as JsonObject)?.['exec'] as JsonObject)?.['command'] as string[])?.[1],
  );
  const grace = Number(pod['terminationGracePeriodSeconds'] ?? 30);
  // After SIGTERM the app drains for up to 2 s, closes its pools and workers, and exits on its own
  // within STOP_DEADLINE_MS whatever hangs (libs/service server.ts): that must come before SIGKILL.
  const deadline = STOP_DEADLINE_MS / 1000;
  if (!(sleep > 0)) return [`${where}: needs a preStop sleep, so endpoint removal reaches the proxies before the listeners close`];
  if (grace < sleep + deadline + 2)
    return [
      `${where}: terminationGracePeriodSeconds ${grace} is under the preStop sleep (${sleep} s) + the apps' stop deadline (${deadline} s) + 2 s: Kubernetes would SIGKILL a pod that is still closing on its own`,
    ];
  return [];
}

function hasDisruptionBudget(o: K8sObject, objects: K8sObject[]): boolean {
  const labels = ((podTemplate(o)!['metadata'] as JsonObject)['labels'] as Record<string, string>) ?? {};
  return objects.some(
    (b) =>
      b.kind === 'PodDisruptionBudget' &&
      b.metadata.namespace === o.metadata.namespace &&
      matches((b['spec'] as JsonObject)['selector'] as Selector, labels),
  );
}
