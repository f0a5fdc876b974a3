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

/** Every problem of the rendered `objects`, each prefixed with the object it is in; none when the overlay is sound. */
export function validateObjects(
  objects: K8sObject[],
  secrets: ExternalSecret[],
  controllers: IngressController[] = ingressControllers(),
): string[] {
  const problems: string[] = [];
  const report = (o: K8sObject, msg: string) => problems.push(`${describe(o)}: ${msg}`);

  for (const o of objects) for (const p of schemaProblems(o)) report(o, p);
  if (problems.length) return problems; // references are only worth following in well-formed objects

  const ns = (o: K8sObject) => o.metadata.namespace ?? '';
  const find = (kind: string, name: string, namespace: string) =>
    objects.find((o) => o.kind === kind && o.metadata.name === name && ns(o) === namespace);
  const pods: Pod[] = [
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
  const podsOf = (selector: Selector | undefined, namespace: string) =>
    pods.filter((p) => p.namespace === namespace && matches(selector, p.labels));
  const hasPort = (p: Pod, port: unknown) => p.ports.some((x) => (typeof port === 'number' ? x.containerPort === port : x.name === port));

  const secretHas = (name: string, key: string | undefined, namespace: string): string | undefined => {
    const rendered = find('Secret', name, namespace);
    if (rendered) {
      const keys = Object.keys({ ...(rendered['data'] as object), ...(rendered['stringData'] as object) });
      return key === undefined || keys.includes(key) ? undefined : `Secret ${name} has no key ${key}`;
    }
    const external = secrets.find((s) => s.name === name);
    if (!external) return `Secret ${name} is neither rendered nor in deploy/kubernetes/external-secrets.yaml for this overlay`;
    return key === undefined || external.keys.includes(key) ? undefined : `Secret ${name} (external) has no documented key ${key}`;
  };
  const configMapHas = (name: string, key: string | undefined, namespace: string): string | undefined => {
    const cm = find('ConfigMap', name, namespace);
    if (!cm) return `ConfigMap ${name} is not rendered`;
    return key === undefined || key in ((cm['data'] as object) ?? {}) ? undefined : `ConfigMap ${name} has no key ${key}`;
  };
  const referencedSecrets = new Set<string>();

  // What each ingress controller must reach: the pods and container ports behind its class's Ingresses.
  const key = (p: Pod, port: number) => `${describe(p.owner)}:${port}`;
  const routes = new Map<string, Map<string, { ingress: K8sObject; pod: Pod; port: number }>>();
  for (const o of objects.filter((x) => x.kind === 'Ingress')) {
    const spec = o['spec'] as JsonObject;
    const cls = spec['ingressClassName'] as string | undefined;
    if (!controllers.some((c) => c.class === cls)) {
      report(o, `ingressClassName ${cls ?? '(none)'}: no controller serves it in deploy/kubernetes/ingress-controllers.yaml`);
      continue;
    }
    const backends = [
      ...(spec['defaultBackend'] ? [spec['defaultBackend'] as JsonObject] : []),
      ...((spec['rules'] as JsonObject[]) ?? []).flatMap((r) =>
        (((r['http'] as JsonObject)?.['paths'] as JsonObject[]) ?? []).map((p) => p['backend'] as JsonObject),
      ),
    ];
    for (const backend of backends) {
      const ref = backend['service'] as JsonObject | undefined;
      const svc = ref && find('Service', String(ref['name']), ns(o));
      const wanted = ref?.['port'] as JsonObject | undefined;
      const port =
        svc &&
        ((svc['spec'] as JsonObject)['ports'] as JsonObject[]).find((p) =>
          wanted?.['name'] ? p['name'] === wanted['name'] : p['port'] === wanted?.['number'],
        );
      if (!svc || !port) continue; // reported with the Ingress below
      const target = port['targetPort'] ?? port['port'];
      const selector = (svc['spec'] as JsonObject)['selector'] as Record<string, string> | undefined;
      for (const pod of selector ? podsOf({ matchLabels: selector }, ns(o)) : [])
        for (const x of pod.ports.filter((x) => (typeof target === 'number' ? x.containerPort === target : x.name === target))) {
          if (!routes.has(cls!)) routes.set(cls!, new Map());
          routes.get(cls!)!.set(key(pod, x.containerPort), { ingress: o, pod, port: x.containerPort });
        }
    }
  }
  const admitted = new Set<string>(); // class + key: a controller some policy admits there

  for (const o of objects) {
    const namespace = ns(o);
    const spec = (o['spec'] ?? {}) as JsonObject;

    if (o.kind === 'Secret' && (o['data'] || o['stringData'])) report(o, 'holds values: Secrets are created out of band, never committed');

    if (WORKLOADS.includes(o.kind)) {
      const pod = podSpec(o)!;
      const labels = ((podTemplate(o)!['metadata'] as JsonObject | undefined)?.['labels'] as Record<string, string>) ?? {};
      if (o.kind !== 'Job' && !matches(spec['selector'] as Selector, labels))
        report(o, "its selector does not match its own pod template's labels");
      const account = pod['serviceAccountName'] as string | undefined;
      if (account && !find('ServiceAccount', account, namespace)) report(o, `serviceAccountName ${account}: no such ServiceAccount`);
      for (const c of containers(o)) {
        const where = `container ${String(c['name'])}`;
        const ports = (c['ports'] as Pod['ports']) ?? [];
        for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
          const handler = c[probe] as JsonObject | undefined;
          const port = ((handler?.['httpGet'] ?? handler?.['tcpSocket']) as JsonObject | undefined)?.['port'];
          if (port !== undefined && !ports.some((p) => (typeof port === 'number' ? p.containerPort === port : p.name === port))) {
            report(o, `${where} ${probe} names port ${String(port)}, which the container does not declare`);
          }
        }
        // Kubernetes expands $(NAME) only from variables defined before it (envFrom's come first); anything else stays as written.
        const defined = new Set<string>(((c['envFrom'] as JsonObject[]) ?? []).flatMap((e) => envFromKeys(e, objects, secrets, namespace)));
        for (const e of (c['env'] as JsonObject[]) ?? []) {
          if (typeof e['value'] === 'string')
            for (const [, ref] of e['value'].matchAll(/(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g))
              if (!defined.has(ref!))
                report(o, `${where} env ${String(e['name'])}: $(${ref}) is not defined before it, so it is never expanded`);
          defined.add(String(e['name']));
          if (/DATABASE_URL$/.test(String(e['name'])) && typeof e['value'] === 'string') {
            const wrong = databaseUrlProblem(
              e['value'],
              objects.filter((x) => isCluster(x) && ns(x) === namespace),
              objects,
              namespace,
            );
            if (wrong) report(o, `${where} env ${String(e['name'])}: ${wrong}`);
          }
          const from = e['valueFrom'] as JsonObject | undefined;
          const sk = from?.['secretKeyRef'] as JsonObject | undefined;
          const ck = from?.['configMapKeyRef'] as JsonObject | undefined;
          if (sk) referencedSecrets.add(String(sk['name']));
          // An optional key may be absent (the variable is then unset), but its ConfigMap must be rendered.
          const wrong = sk
            ? secretHas(String(sk['name']), String(sk['key']), namespace)
            : ck
              ? configMapHas(String(ck['name']), ck['optional'] === true ? undefined : String(ck['key']), namespace)
              : undefined;
          if (wrong) report(o, `${where} env ${String(e['name'])}: ${wrong}`);
        }
        for (const e of (c['envFrom'] as JsonObject[]) ?? []) {
          const s = e['secretRef'] as JsonObject | undefined;
          const m = e['configMapRef'] as JsonObject | undefined;
          if (s) referencedSecrets.add(String(s['name']));
          const wrong = s
            ? secretHas(String(s['name']), undefined, namespace)
            : m
              ? configMapHas(String(m['name']), undefined, namespace)
              : undefined;
          if (wrong) report(o, `${where} envFrom: ${wrong}`);
        }
        const volumes = ((pod['volumes'] as JsonObject[]) ?? []).map((v) => v['name']);
        const claims = ((spec['volumeClaimTemplates'] as JsonObject[]) ?? []).map((v) => (v['metadata'] as JsonObject)?.['name']);
        for (const m of (c['volumeMounts'] as JsonObject[]) ?? []) {
          if (!volumes.includes(m['name']) && !claims.includes(m['name']))
            report(o, `${where} mounts ${String(m['name'])}, which is no volume of the pod`);
        }
      }
      for (const v of (pod['volumes'] as JsonObject[]) ?? []) {
        const cm = v['configMap'] as JsonObject | undefined;
        const s = v['secret'] as JsonObject | undefined;
        if (s) referencedSecrets.add(String(s['secretName']));
        const wrong = cm
          ? configMapHas(String(cm['name']), undefined, namespace)
          : s
            ? secretHas(String(s['secretName']), undefined, namespace)
            : undefined;
        if (wrong) report(o, `volume ${String(v['name'])}: ${wrong}`);
      }
      for (const t of (pod['topologySpreadConstraints'] as JsonObject[]) ?? []) {
        if (!matches(t['labelSelector'] as Selector, labels))
          report(o, `topology spread on ${String(t['topologyKey'])} selects other pods than its own`);
      }
      problems.push(...workloadRules(o, objects).map((p) => `${describe(o)}: ${p}`));
    }

    if (o.kind === 'Service') {
      const selector = spec['selector'] as Record<string, string> | undefined;
      const selected = selector && Object.keys(selector).length ? podsOf({ matchLabels: selector }, namespace) : [];
      if (!selected.length) report(o, 'its selector matches no pod');
      for (const port of (spec['ports'] as JsonObject[]) ?? []) {
        const target = port['targetPort'] ?? port['port'];
        for (const p of selected)
          if (!hasPort(p, target))
            report(
              o,
              `port ${String(port['name'] ?? port['port'])} targets ${String(target)}, which ${describe(p.owner)} does not declare`,
            );
      }
    }

    if (isCluster(o)) {
      for (const p of clusterRules(o)) report(o, p);
      const roleSecrets = [
        ...(((spec['managed'] as JsonObject | undefined)?.['roles'] as JsonObject[] | undefined) ?? []).map(
          (r) => (r['passwordSecret'] as JsonObject | undefined)?.['name'],
        ),
        ((((spec['bootstrap'] as JsonObject | undefined)?.['initdb'] as JsonObject | undefined)?.['secret'] as JsonObject | undefined) ??
          {})['name'],
      ].filter((name): name is string => typeof name === 'string');
      for (const name of new Set(roleSecrets)) {
        referencedSecrets.add(name);
        // The operator reads a role's credentials from a kubernetes.io/basic-auth Secret.
        const wrong = secretHas(name, 'username', namespace) ?? secretHas(name, 'password', namespace);
        if (wrong) report(o, `role password: ${wrong}`);
      }
    }

    if (o.apiVersion === CNPG && o.kind === 'Database') {
      const clusterName = String((spec['cluster'] as JsonObject)['name']);
      const cluster = objects.find((x) => isCluster(x) && x.metadata.name === clusterName && ns(x) === namespace);
      if (!cluster) report(o, `cluster ${clusterName}: no such Cluster`);
      else if (!clusterRoles(cluster).includes(String(spec['owner'])))
        report(o, `owner ${String(spec['owner'])} is no role of Cluster ${clusterName} (spec.managed.roles)`);
    }

    if (o.kind === 'PodDisruptionBudget' && !podsOf(spec['selector'] as Selector, namespace).length)
      report(o, 'its selector matches no pod');

    if (o.kind === 'HorizontalPodAutoscaler') {
      const ref = spec['scaleTargetRef'] as JsonObject;
      const target = find(String(ref['kind']), String(ref['name']), namespace);
      if (!target) report(o, `scaleTargetRef ${String(ref['kind'])}/${String(ref['name'])}: no such object`);
      else if ((target['spec'] as JsonObject)['replicas'] !== undefined)
        report(o, `${describe(target)} sets spec.replicas, which every kubectl apply would reset under the autoscaler`);
    }

    if (o.kind === 'NetworkPolicy') {
      const selector = spec['podSelector'] as Selector;
      const own =
        Object.keys(selector.matchLabels ?? {}).length || selector.matchExpressions?.length
          ? podsOf(selector, namespace)
          : pods.filter((p) => p.namespace === namespace);
      if (!own.length) report(o, 'its podSelector matches no pod');
      for (const [direction, peersKey] of [
        ['ingress', 'from'],
        ['egress', 'to'],
      ] as const) {
        for (const rule of (spec[direction] as JsonObject[]) ?? []) {
          // Another namespace's peers are named by namespace and pods: a namespace as a whole takes in
          // whatever else runs there (the other ingress controller, say); an empty selector, every namespace.
          for (const peer of (rule[peersKey] as JsonObject[]) ?? []) {
            const namespaces = peer['namespaceSelector'] as Selector | undefined;
            if (!namespaces) continue;
            if (isEmpty(namespaces)) report(o, `${direction} peer ${JSON.stringify(peer)} selects every namespace: name it`);
            if (isEmpty(peer['podSelector'] as Selector | undefined))
              report(o, `${direction} peer ${JSON.stringify(namespaces)} takes in every pod of the namespace: name the pods (podSelector)`);
          }
          // Each ingress controller reaches only what its class's Ingresses route to.
          if (direction === 'ingress')
            for (const c of controllers.filter(
              (c) =>
                !(rule['from'] as JsonObject[] | undefined)?.length ||
                (rule['from'] as JsonObject[]).some((peer) => peerAdmits(peer, c, namespace)),
            ))
              for (const p of own)
                for (const port of portsOpened(rule, p)) {
                  admitted.add(`${c.class} ${key(p, port)}`);
                  if (!routes.get(c.class)?.has(key(p, port)))
                    report(
                      o,
                      `ingress admits the ${c.class} ingress controller to port ${port} of ${describe(p.owner)}, which no Ingress of class ${c.class} routes to`,
                    );
                }
          const peers = ((rule[peersKey] as JsonObject[]) ?? []).filter((peer) => peer['podSelector'] && !peer['namespaceSelector']);
          for (const peer of peers)
            if (!podsOf(peer['podSelector'] as Selector, namespace).length)
              report(o, `${direction} peer ${JSON.stringify(peer['podSelector'])} matches no pod`);
          // The port must be open on the pods that receive: the policy's own pods (ingress) or the peers (egress).
          const receivers = direction === 'ingress' ? own : peers.flatMap((peer) => podsOf(peer['podSelector'] as Selector, namespace));
          for (const port of (rule['ports'] as JsonObject[]) ?? []) {
            for (const p of receivers)
              if (!hasPort(p, port['port'])) report(o, `${direction} port ${String(port['port'])} is not a port of ${describe(p.owner)}`);
          }
        }
      }
    }

    if (o.kind === 'Ingress') {
      for (const t of (spec['tls'] as JsonObject[]) ?? []) {
        referencedSecrets.add(String(t['secretName']));
        const wrong = secretHas(String(t['secretName']), undefined, namespace);
        if (wrong) report(o, `tls: ${wrong}`);
      }
      for (const rule of (spec['rules'] as JsonObject[]) ?? []) {
        for (const path of ((rule['http'] as JsonObject)?.['paths'] as JsonObject[]) ?? []) {
          const backend = (path['backend'] as JsonObject)['service'] as JsonObject;
          const svc = find('Service', String(backend['name']), namespace);
          const port = backend['port'] as JsonObject;
          if (!svc) report(o, `backend Service ${String(backend['name'])}: no such Service`);
          else if (
            !((svc['spec'] as JsonObject)['ports'] as JsonObject[]).some((p) =>
              port['name'] ? p['name'] === port['name'] : p['port'] === port['number'],
            )
          ) {
            report(o, `backend ${String(backend['name'])} port ${String(port['name'] ?? port['number'])}: the Service has no such port`);
          }
        }
      }
    }
  }

  for (const [cls, reached] of routes)
    for (const [k, { ingress, pod, port }] of reached)
      if (!admitted.has(`${cls} ${k}`))
        report(
          ingress,
          `routes to port ${port} of ${describe(pod.owner)}, but no NetworkPolicy admits the ${cls} ingress controller there`,
        );

  for (const s of secrets)
    if (!referencedSecrets.has(s.name)) problems.push(`external Secret ${s.name} is documented for this overlay but nothing references it`);

  const namespaces = new Set(pods.map((p) => p.namespace));
  for (const n of namespaces) {
    const denyAll = objects.some((o) => {
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
    });
    if (!denyAll) problems.push(`namespace ${n || '(none)'}: no default-deny NetworkPolicy (ingress and egress)`);
  }
  return problems;
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
  const problems: string[] = [];
  const spec = o['spec'] as JsonObject;
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
  const storage = (spec['storage'] ?? {}) as JsonObject;
  if (!storage['size'] && !storage['pvcTemplate']) problems.push('spec.storage has no size: the instances would have no volume');
  const resources = (spec['resources'] ?? {}) as JsonObject;
  if (!(resources['requests'] as JsonObject)?.['cpu'] || !(resources['requests'] as JsonObject)?.['memory'])
    problems.push('spec.resources: no CPU and memory requests');
  if (!(resources['limits'] as JsonObject)?.['memory']) problems.push('spec.resources: no memory limit');
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
  const podSecurity = (pod['securityContext'] ?? {}) as JsonObject;
  if (pod['automountServiceAccountToken'] !== false)
    problems.push('automountServiceAccountToken must be false (no app calls the Kubernetes API)');
  for (const c of containers(o)) {
    const where = `container ${String(c['name'])}`;
    const sc = (c['securityContext'] ?? {}) as JsonObject;
    if ((sc['runAsNonRoot'] ?? podSecurity['runAsNonRoot']) !== true) problems.push(`${where}: runAsNonRoot is not set`);
    if (sc['readOnlyRootFilesystem'] !== true) problems.push(`${where}: readOnlyRootFilesystem is not set`);
    if (sc['allowPrivilegeEscalation'] !== false) problems.push(`${where}: allowPrivilegeEscalation is not false`);
    const resources = (c['resources'] ?? {}) as JsonObject;
    if (!(resources['requests'] as JsonObject)?.['cpu'] || !(resources['requests'] as JsonObject)?.['memory'])
      problems.push(`${where}: no CPU and memory requests`);
    if (!(resources['limits'] as JsonObject)?.['memory']) problems.push(`${where}: no memory limit`);
    if (!c['livenessProbe'] || !c['readinessProbe']) problems.push(`${where}: needs a liveness and a readiness probe`);
    if (o.kind === 'Deployment') {
      const sleep = Number(
        ((((c['lifecycle'] as JsonObject)?.['preStop'] as JsonObject)?.['exec'] as JsonObject)?.['command'] as string[])?.[1],
      );
      const grace = Number(pod['terminationGracePeriodSeconds'] ?? 30);
      // After SIGTERM the app drains for up to 2 s, closes its pools and workers, and exits on its own
      // within STOP_DEADLINE_MS whatever hangs (libs/service server.ts): that must come before SIGKILL.
      const deadline = STOP_DEADLINE_MS / 1000;
      if (!(sleep > 0))
        problems.push(`${where}: needs a preStop sleep, so endpoint removal reaches the proxies before the listeners close`);
      else if (grace < sleep + deadline + 2)
        problems.push(
          `${where}: terminationGracePeriodSeconds ${grace} is under the preStop sleep (${sleep} s) + the apps' stop deadline (${deadline} s) + 2 s: Kubernetes would SIGKILL a pod that is still closing on its own`,
        );
    }
  }
  if (o.kind === 'Deployment') {
    const labels = ((podTemplate(o)!['metadata'] as JsonObject)['labels'] as Record<string, string>) ?? {};
    const budget = objects.some(
      (b) =>
        b.kind === 'PodDisruptionBudget' &&
        b.metadata.namespace === o.metadata.namespace &&
        matches((b['spec'] as JsonObject)['selector'] as Selector, labels),
    );
    if (!budget) problems.push('no PodDisruptionBudget selects its pods');
  }
  return problems;
}
