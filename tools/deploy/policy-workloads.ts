/**
 * The policy's rules for workloads (Deployments, StatefulSets, Jobs, DaemonSets): first their
 * references (selector, service account, probe ports, env, mounts, volumes, spread), which the
 * API server accepts dangling; then what a cluster would accept but the platform does not ship.
 * Part of the table in policy.ts.
 */
import { STOP_DEADLINE_MS } from '@trading/config';
import { rule, type Rule } from './engine';
import { podSpec, type JsonObject, type K8sObject } from './kustomize';
import { declares, list, matches, ns, specOf, templateLabels, WORKLOADS, type Overlay, type Selector } from './overlay-model';
import * as part from './parts';
import { CLUSTER, databaseUrlProblem } from './postgres';

const securityContext = (x: JsonObject) => (x['securityContext'] ?? {}) as JsonObject;
const preStopSleep = (c: JsonObject) =>
  Number(((((c['lifecycle'] as JsonObject)?.['preStop'] as JsonObject)?.['exec'] as JsonObject)?.['command'] as string[])?.[1]);
const grace = (pod: JsonObject) => Number(pod['terminationGracePeriodSeconds'] ?? 30);
// After SIGTERM the app drains for up to 2 s, closes its pools and workers, and exits on its own
// within STOP_DEADLINE_MS whatever hangs (libs/service server.ts): that must come before SIGKILL.
const STOP_DEADLINE_S = STOP_DEADLINE_MS / 1000;
const serviceAccount = (o: K8sObject) => String(podSpec(o)!['serviceAccountName']);

/** Where an object's references point, and what is missing there (undefined: nothing). */
type Lookup = { kind: string; name: string; key?: string; namespace: string };
const missing = (v: Overlay, { kind, name, key, namespace }: Lookup) =>
  kind === 'Secret' ? v.secretProblem(name, key, namespace) : v.configMapProblem(name, key, namespace);

export const WORKLOAD_REFERENCES: Rule[] = [
  rule({
    name: 'workload-selector-matches-template',
    select: { kinds: ['Deployment', 'StatefulSet', 'DaemonSet'] },
    require: (o) => matches(specOf(o)['selector'] as Selector, templateLabels(o)),
    message: "its selector does not match its own pod template's labels",
  }),
  rule({
    name: 'service-account-exists',
    select: { kinds: WORKLOADS },
    require: (o, v) => !podSpec(o)!['serviceAccountName'] || !!v.find('ServiceAccount', serviceAccount(o), ns(o)),
    message: (o) => `serviceAccountName ${serviceAccount(o)}: no such ServiceAccount`,
  }),
  rule({
    name: 'probe-port-declared',
    select: { kinds: WORKLOADS, each: part.probeParts },
    require: ({ port, ports }) => declares(ports, port),
    message: ({ where, probe, port }) => `${where} ${probe} names port ${String(port)}, which the container does not declare`,
  }),
  rule({
    name: 'env-expansion-defined',
    select: { kinds: WORKLOADS, each: part.expansionParts },
    require: ({ ref, definedBefore }) => definedBefore.has(ref),
    message: ({ where, ref }) => `${where}: $(${ref}) is not defined before it, so it is never expanded`,
  }),
  rule({
    name: 'database-url-reaches-cluster',
    select: { kinds: WORKLOADS, each: part.databaseUrlParts },
    require: ({ url, object }, v) => !databaseUrlProblem(url, v.objects, ns(object)),
    message: ({ url, object, where }, v) => `${where}: ${databaseUrlProblem(url, v.objects, ns(object))}`,
  }),
  rule({
    // An optional key may be absent (the variable is then unset), but its ConfigMap must be rendered.
    name: 'env-key-exists',
    select: { kinds: WORKLOADS, each: part.envRefParts },
    require: (e, v) => !missing(v, envLookup(e)),
    message: (e, v) => `${e.where}: ${missing(v, envLookup(e))}`,
  }),
  rule({
    name: 'env-from-exists',
    select: { kinds: WORKLOADS, each: (o) => part.envFromParts(o).map((e) => ({ ...e, namespace: ns(o) })) },
    require: (e, v) => !missing(v, e),
    message: (e, v) => `${e.where} envFrom: ${missing(v, e)}`,
  }),
  rule({
    name: 'mount-is-volume',
    select: { kinds: WORKLOADS, each: part.mountParts },
    require: ({ name, volumes }) => volumes.includes(name),
    message: ({ where, name }) => `${where} mounts ${String(name)}, which is no volume of the pod`,
  }),
  rule({
    name: 'volume-source-exists',
    select: { kinds: WORKLOADS, each: (o) => part.volumeParts(o).map((x) => ({ ...x, namespace: ns(o) })) },
    require: (x, v) => !missing(v, x),
    message: (x, v) => `${x.where}: ${missing(v, x)}`,
  }),
  rule({
    name: 'spread-selects-own-pods',
    select: { kinds: WORKLOADS, each: (o) => list(podSpec(o)!['topologySpreadConstraints']).map((t) => ({ o, t })) },
    require: ({ o, t }) => matches(t['labelSelector'] as Selector, templateLabels(o)),
    message: ({ t }) => `topology spread on ${String(t['topologyKey'])} selects other pods than its own`,
  }),
];

function envLookup(e: ReturnType<typeof part.envRefParts>[number]): Lookup {
  const optional = e.kind === 'ConfigMap' && e.ref['optional'] === true;
  return { kind: e.kind, name: String(e.ref['name']), key: optional ? undefined : String(e.ref['key']), namespace: ns(e.object) };
}

/** What a cluster would accept but we do not ship: non-root, read-only, no escalation, bounded resources, probes, a drain. */
export const WORKLOAD_RULES: Rule[] = [
  rule({
    name: 'no-service-account-token',
    select: { kinds: WORKLOADS },
    require: (o) => podSpec(o)!['automountServiceAccountToken'] === false,
    message: 'automountServiceAccountToken must be false (no app calls the Kubernetes API)',
  }),
  rule({
    name: 'run-as-non-root',
    select: { kinds: WORKLOADS, each: part.containerParts },
    require: ({ container, pod }) => (securityContext(container)['runAsNonRoot'] ?? securityContext(pod)['runAsNonRoot']) === true,
    message: ({ where }) => `${where}: runAsNonRoot is not set`,
  }),
  rule({
    name: 'read-only-root-filesystem',
    select: { kinds: WORKLOADS, each: part.containerParts },
    require: ({ container }) => securityContext(container)['readOnlyRootFilesystem'] === true,
    message: ({ where }) => `${where}: readOnlyRootFilesystem is not set`,
  }),
  rule({
    name: 'no-privilege-escalation',
    select: { kinds: WORKLOADS, each: part.containerParts },
    require: ({ container }) => securityContext(container)['allowPrivilegeEscalation'] === false,
    message: ({ where }) => `${where}: allowPrivilegeEscalation is not false`,
  }),
  // CPU and memory requests (what the scheduler places by) and a memory limit, for a container or a Cluster's instances.
  rule({
    name: 'resource-requests',
    select: { kinds: [...WORKLOADS, CLUSTER], each: part.resourceParts },
    require: ({ resources }) => !!(resources['requests'] as JsonObject)?.['cpu'] && !!(resources['requests'] as JsonObject)?.['memory'],
    message: ({ where }) => `${where}: no CPU and memory requests`,
  }),
  rule({
    name: 'memory-limit',
    select: { kinds: [...WORKLOADS, CLUSTER], each: part.resourceParts },
    require: ({ resources }) => !!(resources['limits'] as JsonObject)?.['memory'],
    message: ({ where }) => `${where}: no memory limit`,
  }),
  rule({
    name: 'liveness-and-readiness-probes',
    select: { kinds: WORKLOADS, each: part.containerParts },
    require: ({ container }) => !!container['livenessProbe'] && !!container['readinessProbe'],
    message: ({ where }) => `${where}: needs a liveness and a readiness probe`,
  }),
  rule({
    name: 'prestop-sleep',
    select: { kinds: ['Deployment'], each: part.containerParts },
    require: ({ container }) => preStopSleep(container) > 0,
    message: ({ where }) => `${where}: needs a preStop sleep, so endpoint removal reaches the proxies before the listeners close`,
  }),
  rule({
    name: 'grace-outlasts-stop',
    select: { kinds: ['Deployment'], each: part.containerParts },
    require: ({ container, pod }) => !(preStopSleep(container) > 0) || grace(pod) >= preStopSleep(container) + STOP_DEADLINE_S + 2,
    message: ({ container, pod, where }) =>
      `${where}: terminationGracePeriodSeconds ${grace(pod)} is under the preStop sleep (${preStopSleep(container)} s) + the apps' stop deadline (${STOP_DEADLINE_S} s) + 2 s: Kubernetes would SIGKILL a pod that is still closing on its own`,
  }),
  rule({
    name: 'disruption-budget',
    select: { kinds: ['Deployment'] },
    require: (o, v) =>
      v.objects.some(
        (b) => b.kind === 'PodDisruptionBudget' && ns(b) === ns(o) && matches(specOf(b)['selector'] as Selector, templateLabels(o)),
      ),
    message: 'no PodDisruptionBudget selects its pods',
  }),
];
