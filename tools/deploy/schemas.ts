/**
 * Checks one object against the Kubernetes API's OpenAPI schema offline, with the models of
 * `kubernetes-models` 4.5 (Kubernetes 1.27). Their validators check types, enums and required
 * fields but let unknown fields through, which the API server (kubectl's default strict field
 * validation) would refuse; so the object is validated through a proxy that records every field
 * the validator reads, and a field it never read is one the schema does not know.
 */
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { K8sObject } from './kustomize';

interface ModelClass {
  prototype: { validate(): void };
}

/** apiVersion + kind → model; a kind the overlays start using is added here (and its schema comes with the package). */
const MODELS: Record<string, ModelClass> = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'networking.k8s.io/v1/Ingress': Ingress,
};

/** The schema's complaints about `object`, each as "path: message"; none when it is valid. */
export function schemaProblems(object: K8sObject): string[] {
  const model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (!model) return [`no schema known for apiVersion ${object.apiVersion} kind ${object.kind} (tools/deploy/schemas.ts)`];
  const tracked = trackReads(object);
  const problems: string[] = [];
  try {
    model.prototype.validate.call(tracked.proxy);
  } catch (err) {
    const errors = (err as { errors?: Array<{ instancePath: string; message?: string }> }).errors;
    if (errors?.length) problems.push(...errors.map((e) => `${e.instancePath || '/'}: ${e.message ?? 'invalid'}`));
    else problems.push((err as Error).message);
  }
  // Unknown fields only mean something once the known ones are right (a wrong type stops the validator's descent).
  if (!problems.length) problems.push(...tracked.unread().map((path) => `${path}: unknown field`));
  return problems;
}

function trackReads(root: object): { proxy: object; unread(): string[] } {
  const seen = new Map<object, { path: string; read: Set<string> }>();
  const wrap = (value: unknown, path: string): unknown => {
    if (!value || typeof value !== 'object') return value;
    const entry = seen.get(value) ?? { path, read: new Set<string>() };
    seen.set(value, entry);
    return new Proxy(value, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver);
        if (typeof key !== 'string') return v;
        entry.read.add(key);
        return wrap(v, `${path}/${key}`);
      },
    });
  };
  return {
    proxy: wrap(root, '') as object,
    unread: () =>
      [...seen.entries()].flatMap(([value, { path, read }]) =>
        Array.isArray(value)
          ? []
          : Object.keys(value)
              .filter((k) => !read.has(k))
              .map((k) => `${path}/${k}`),
      ),
  };
}
