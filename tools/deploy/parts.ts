/**
 * The parts of an object the rules select (engine.ts, `each`): a workload's containers, probes,
 * env vars and volumes, a Service's ports, a NetworkPolicy's peers and ports, an Ingress's TLS
 * entries and backends, a PostgreSQL Cluster's resources and role Secrets. Each part carries what
 * its rule's message names (`where`) and what the rule needs to judge it.
 */
import { containers, podSpec, type JsonObject, type K8sObject } from './kustomize';
import { list, ns, specOf, type Admission, type Overlay, type Pod, type Selector } from './overlay-model';
import { isCluster, roleSecretNames } from './postgres';

export interface ContainerPart {
  object: K8sObject;
  pod: JsonObject;
  container: JsonObject;
  /** "container <name>" */
  where: string;
}

export const containerParts = (o: K8sObject): ContainerPart[] =>
  containers(o).map((container) => ({ object: o, pod: podSpec(o)!, container, where: `container ${String(container['name'])}` }));

/** A probe that names a port, and the ports its container declares. */
export const probeParts = (o: K8sObject) =>
  containerParts(o).flatMap(({ container, where }) =>
    ['startupProbe', 'livenessProbe', 'readinessProbe']
      .map((probe) => {
        const handler = container[probe] as JsonObject | undefined;
        const port = ((handler?.['httpGet'] ?? handler?.['tcpSocket']) as JsonObject | undefined)?.['port'];
        return { where, probe, port, ports: (container['ports'] as Pod['ports'] | undefined) ?? [] };
      })
      .filter((p) => p.port !== undefined),
  );

export interface EnvPart {
  object: K8sObject;
  env: JsonObject;
  /** "container <name> env <NAME>" */
  where: string;
  /** The variables defined before it (envFrom's come first), the only ones Kubernetes expands in its value. */
  definedBefore: Set<string>;
}

function envParts(o: K8sObject, v: Overlay): EnvPart[] {
  return containerParts(o).flatMap(({ container, where }) => {
    const defined = new Set(list(container['envFrom']).flatMap((e) => v.envFromKeys(e, ns(o))));
    return list(container['env']).map((env) => {
      const part = { object: o, env, where: `${where} env ${String(env['name'])}`, definedBefore: new Set(defined) };
      defined.add(String(env['name']));
      return part;
    });
  });
}

/** Each $(NAME) in an env var's value ($$(NAME) is an escaped literal). */
export const expansionParts = (o: K8sObject, v: Overlay) =>
  envParts(o, v).flatMap((e) =>
    typeof e.env['value'] === 'string'
      ? [...e.env['value'].matchAll(/(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)].map(([, ref]) => ({ ...e, ref: ref! }))
      : [],
  );

/** An env var whose value is a database URL written out. */
export const databaseUrlParts = (o: K8sObject, v: Overlay) =>
  envParts(o, v)
    .filter((e) => /DATABASE_URL$/.test(String(e.env['name'])) && typeof e.env['value'] === 'string')
    .map((e) => ({ ...e, url: e.env['value'] as string }));

/** An env var from a key of a Secret or ConfigMap. */
export const envRefParts = (o: K8sObject, v: Overlay) =>
  envParts(o, v).flatMap((e) => {
    const from = e.env['valueFrom'] as JsonObject | undefined;
    const ref = (from?.['secretKeyRef'] ?? from?.['configMapKeyRef']) as JsonObject | undefined;
    return ref ? [{ ...e, ref, kind: from?.['secretKeyRef'] ? 'Secret' : 'ConfigMap' }] : [];
  });

/** An envFrom source (a whole Secret or ConfigMap). */
export const envFromParts = (o: K8sObject) =>
  containerParts(o).flatMap(({ container, where }) =>
    list(container['envFrom']).flatMap((e) => {
      const ref = (e['secretRef'] ?? e['configMapRef']) as JsonObject | undefined;
      return ref ? [{ where, name: String(ref['name']), kind: e['secretRef'] ? 'Secret' : 'ConfigMap' }] : [];
    }),
  );

/** A volume mount, and the volumes (and a StatefulSet's claims) it may name. */
export const mountParts = (o: K8sObject) =>
  containerParts(o).flatMap(({ container, where, pod }) => {
    const volumes = [
      ...list(pod['volumes']).map((x) => x['name']),
      ...list(specOf(o)['volumeClaimTemplates']).map((x) => (x['metadata'] as JsonObject | undefined)?.['name']),
    ];
    return list(container['volumeMounts']).map((mount) => ({ where, name: mount['name'], volumes }));
  });

/** A volume from a Secret or ConfigMap. */
export const volumeParts = (o: K8sObject) =>
  list(podSpec(o)?.['volumes']).flatMap((vol) => {
    const secret = vol['secret'] as JsonObject | undefined;
    const cm = vol['configMap'] as JsonObject | undefined;
    const where = `volume ${String(vol['name'])}`;
    if (cm) return [{ where, kind: 'ConfigMap', name: String(cm['name']) }];
    return secret ? [{ where, kind: 'Secret', name: String(secret['secretName']) }] : [];
  });

/** Where resources are set: each container of a workload, or a PostgreSQL Cluster's instances. */
export const resourceParts = (o: K8sObject) =>
  isCluster(o)
    ? [{ where: 'spec.resources', resources: (specOf(o)['resources'] ?? {}) as JsonObject }]
    : containerParts(o).map(({ where, container }) => ({ where, resources: (container['resources'] ?? {}) as JsonObject }));

/** A Service port and each pod the Service selects. */
export const servicePortParts = (o: K8sObject, v: Overlay) => {
  const selector = specOf(o)['selector'] as Record<string, string> | undefined;
  const selected = selector && Object.keys(selector).length ? v.podsOf({ matchLabels: selector }, ns(o)) : [];
  return list(specOf(o)['ports']).flatMap((port) => selected.map((pod) => ({ port, pod, target: port['targetPort'] ?? port['port'] })));
};

export const roleSecretParts = (o: K8sObject) => roleSecretNames(o);

type Direction = 'ingress' | 'egress';

/** Each rule of a NetworkPolicy, with its peers (from or to). */
const policyRules = (o: K8sObject) =>
  (['ingress', 'egress'] as Direction[]).flatMap((direction) =>
    list(specOf(o)[direction]).map((rule) => ({ direction, rule, peers: list(rule[direction === 'ingress' ? 'from' : 'to']) })),
  );

/** A peer of another namespace's pods (one with a namespaceSelector). */
export const namespacePeerParts = (o: K8sObject) =>
  policyRules(o).flatMap(({ direction, peers }) =>
    peers
      .filter((peer) => peer['namespaceSelector'])
      .map((peer) => ({
        direction,
        peer,
        namespaces: peer['namespaceSelector'] as Selector,
        pods: peer['podSelector'] as Selector | undefined,
      })),
  );

/** A peer of the policy's own namespace (a podSelector alone). */
export const podPeerParts = (o: K8sObject) =>
  policyRules(o).flatMap(({ direction, peers }) =>
    peers
      .filter((peer) => peer['podSelector'] && !peer['namespaceSelector'])
      .map((peer) => ({ direction, selector: peer['podSelector'] as Selector })),
  );

/** A port a rule opens, and each pod that receives on it: the policy's own pods (ingress) or its pod peers' (egress). */
export const policyPortParts = (o: K8sObject, v: Overlay) =>
  policyRules(o).flatMap(({ direction, rule, peers }) => {
    const receivers =
      direction === 'ingress'
        ? v.policyPods(o)
        : peers
            .filter((peer) => peer['podSelector'] && !peer['namespaceSelector'])
            .flatMap((peer) => v.podsOf(peer['podSelector'] as Selector, ns(o)));
    return list(rule['ports']).flatMap((port) => receivers.map((pod) => ({ direction, port: port['port'], pod })));
  });

/** Where the policy's ingress rules let an ingress controller in. */
export const admissionParts = (o: K8sObject, v: Overlay): Admission[] => v.admissions.get(o) ?? [];

/** A backend Service an Ingress rule's path names. */
export const backendParts = (o: K8sObject) =>
  list(specOf(o)['rules']).flatMap((r) =>
    list((r['http'] as JsonObject | undefined)?.['paths']).map((p) => {
      const service = (p['backend'] as JsonObject)['service'] as JsonObject;
      return { name: String(service['name']), port: service['port'] as JsonObject };
    }),
  );

export const tlsParts = (o: K8sObject) => list(specOf(o)['tls']).map((t) => String(t['secretName']));
