/**
 * Checks one object against the Kubernetes API's OpenAPI schema offline, with the models of
 * `kubernetes-models` 4.5 (Kubernetes 1.27). Their validators check types, enums and required
 * fields but let unknown fields through, which the API server (kubectl's default strict field
 * validation) would refuse; so the object is validated through a proxy that records every field
 * the validator reads, and a field it never read is one the schema does not know.
 *
 * Custom resources (the CloudNativePG Cluster and Database) are checked against their CRDs' own
 * schemas (crds/cloudnative-pg.yaml, written by crd-schemas.ts from the operator's release), the
 * same way: types, enums and required fields, then every field the schema does not declare.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { parse } from 'yaml';
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

/** The OpenAPI schemas of the custom resources (crds/cloudnative-pg.yaml), by apiVersion + kind. */
export interface CrdSchemas {
  /** The operator release manifest they were taken from. */
  source: string;
  schemas: Record<string, object>;
}

export const CRD_SCHEMAS_FILE = join(__dirname, 'crds/cloudnative-pg.yaml');

let crdValidators: Map<string, { schema: JsonSchema; validate: ValidateFunction }> | undefined;

/** apiVersion + kind → the CRD's schema and its compiled validator (read on first use: the Cluster's schema is large). */
function crds(): Map<string, { schema: JsonSchema; validate: ValidateFunction }> {
  if (!crdValidators) {
    // The API server checks no format of a CRD's fields either; x-kubernetes-* keywords are its own.
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const { schemas } = parse(readFileSync(CRD_SCHEMAS_FILE, 'utf8')) as CrdSchemas;
    crdValidators = new Map(Object.entries(schemas).map(([key, schema]) => [key, { schema, validate: ajv.compile(schema) }]));
  }
  return crdValidators;
}

/** The schema's complaints about `object`, each as "path: message"; none when it is valid. */
export function schemaProblems(object: K8sObject): string[] {
  const key = `${object.apiVersion}/${object.kind}`;
  const model = MODELS[key];
  if (model) return modelProblems(object, model);
  const crd = crds().get(key);
  if (crd) return customResourceProblems(object, crd.schema, crd.validate);
  return [`no schema known for apiVersion ${object.apiVersion} kind ${object.kind} (tools/deploy/schemas.ts)`];
}

function modelProblems(object: object, model: ModelClass): string[] {
  const { errors, unknown } = modelCheck(object, model);
  // Unknown fields only mean something once the known ones are right (a wrong type stops the validator's descent).
  return errors.length ? errors : unknown;
}

function modelCheck(object: object, model: ModelClass): { errors: string[]; unknown: string[] } {
  const tracked = trackReads(object);
  const errors: string[] = [];
  try {
    model.prototype.validate.call(tracked.proxy);
  } catch (err) {
    const found = (err as { errors?: Array<{ instancePath: string; message?: string }> }).errors;
    if (found?.length) errors.push(...found.map((e) => `${e.instancePath || '/'}: ${e.message ?? 'invalid'}`));
    else errors.push((err as Error).message);
  }
  return { errors, unknown: tracked.unread().map((path) => `${path}: unknown field`) };
}

/**
 * A custom resource against its CRD's schema. The CRD says nothing of metadata (the API server
 * checks it as every object's), so metadata is checked as a ConfigMap's, whose model validates it.
 */
function customResourceProblems(object: K8sObject, schema: JsonSchema, validate: ValidateFunction): string[] {
  const metadata = modelCheck({ apiVersion: 'v1', kind: 'ConfigMap', metadata: object.metadata }, ConfigMap);
  const errors = validate(object) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message ?? 'invalid'}`);
  errors.push(...metadata.errors);
  if (errors.length) return errors;
  return [...metadata.unknown, ...unknownFields(object, schema, '').filter((path) => !path.startsWith('/metadata/'))];
}

/** The subset of a structural schema (what a CRD may use) that says which fields exist. */
interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

/**
 * The fields of `value` its schema does not declare, as "path: unknown field" (the API server
 * refuses them with strict field validation, and would prune them without), except below a
 * field that keeps unknown fields (x-kubernetes-preserve-unknown-fields).
 */
function unknownFields(value: unknown, schema: JsonSchema, path: string): string[] {
  if (!value || typeof value !== 'object' || schema['x-kubernetes-preserve-unknown-fields']) return [];
  if (Array.isArray(value)) return schema.items ? value.flatMap((v, i) => unknownFields(v, schema.items!, `${path}/${i}`)) : [];
  const more = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  return Object.entries(value).flatMap(([key, v]) => {
    const field = schema.properties?.[key] ?? more;
    if (field) return unknownFields(v, field, `${path}/${key}`);
    return schema.additionalProperties === true ? [] : [`${path}/${key}: unknown field`];
  });
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
