/**
 * Renders a kustomization the way `kubectl kustomize` does, for the subset of Kustomize that
 * deploy/kubernetes uses (no kustomize binary may be installed here, and `npm test` must render
 * every overlay offline). Anything outside the subset is refused by name, so an overlay cannot
 * quietly rely on a feature this renderer would get wrong:
 *
 *   resources            files (multi-document YAML) and directories holding a kustomization
 *   configMapGenerator   literals, envs, files (inside the kustomization's folder), behavior create|merge|replace;
 *                        a content-hash suffix on the name, and references to it in pod specs renamed
 *   patches              strategic merge patches by path or inline, each document naming its target
 *                        by kind and metadata.name (no `target:` selectors, no JSON 6902)
 *   namespace            set on every namespaced object
 *   labels               pairs added to metadata (and pod templates with includeTemplates); never selectors
 *   images               name → newName / newTag / digest in every container
 *   replicas             name → count for Deployments and StatefulSets
 *
 * Order within one kustomization, as Kustomize's: resources, generators, patches, namespace,
 * labels, replicas, images. Output is sorted in Kustomize's legacy order (Namespace first).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { strategicMerge, type JsonObject } from './strategic-merge';

export interface K8sObject extends JsonObject {
  apiVersion: string;
  kind: string;
  metadata: JsonObject & { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}

interface Resource {
  object: K8sObject;
  /** Set on generated ConfigMaps: the name before the hash suffix, which references use. */
  generatedFrom?: string;
}

const SUPPORTED = ['apiVersion', 'kind', 'resources', 'configMapGenerator', 'patches', 'namespace', 'labels', 'images', 'replicas'];
const WHY_NOT: Record<string, string> = {
  commonLabels: 'it rewrites selectors, which a Deployment cannot change after creation; use labels with includeSelectors: false',
  secretGenerator: 'no secret value belongs in this repository; Secrets are created out of band (deploy/README.md)',
  patchesStrategicMerge: 'deprecated; use patches with a path',
  patchesJson6902: 'use a strategic merge patch',
};

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'PersistentVolume',
  'StorageClass',
  'CustomResourceDefinition',
  'IngressClass',
  'PriorityClass',
]);

const LEGACY_ORDER = [
  'Namespace',
  'ResourceQuota',
  'StorageClass',
  'CustomResourceDefinition',
  'ServiceAccount',
  'PodSecurityPolicy',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'ConfigMap',
  'Secret',
  'Endpoints',
  'Service',
  'LimitRange',
  'PriorityClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'Deployment',
  'StatefulSet',
  'CronJob',
  'PodDisruptionBudget',
];
const LAST = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

export class KustomizeError extends Error {
  override name = 'KustomizeError';
}

/** Renders the kustomization in `dir` (and everything it includes) to the objects `kubectl apply -k dir` would send. */
export function renderKustomization(dir: string): K8sObject[] {
  const resources = build(resolve(dir));
  applyHashSuffixes(resources);
  return resources.map((r) => r.object).sort(byLegacyOrder);
}

function build(dir: string): Resource[] {
  const file = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'].map((f) => join(dir, f)).find((f) => existsSync(f));
  if (!file) throw new KustomizeError(`${dir}: no kustomization.yaml`);
  const k = readYamlDocuments(file)[0] as JsonObject | undefined;
  if (!k) throw new KustomizeError(`${file}: empty`);
  for (const key of Object.keys(k)) {
    if (!SUPPORTED.includes(key)) {
      throw new KustomizeError(
        `${file}: "${key}" is outside the Kustomize subset tools/deploy renders${WHY_NOT[key] ? ` (${WHY_NOT[key]})` : ''}`,
      );
    }
  }
  const here = (msg: string) => new KustomizeError(`${file}: ${msg}`);
  const resources: Resource[] = [];
  const add = (r: Resource) => {
    const clash = resources.find((o) => sameId(o.object, r.object));
    if (clash) throw here(`${describe(r.object)} is included twice`);
    resources.push(r);
  };

  for (const entry of list<string>(k['resources'])) {
    if (/^[a-z]+:\/\//.test(entry) || entry.startsWith('github.com/')) throw here(`remote resource ${entry} is outside the subset`);
    const path = resolve(dir, entry);
    if (!existsSync(path)) throw here(`resource ${entry} does not exist`);
    if (statSync(path).isDirectory()) build(path).forEach(add);
    else readObjects(path).forEach((object) => add({ object }));
  }

  for (const gen of list<JsonObject>(k['configMapGenerator'])) generateConfigMap(dir, gen, resources, here);

  for (const patch of list<JsonObject>(k['patches'])) {
    for (const key of Object.keys(patch))
      if (key !== 'path' && key !== 'patch') throw here(`patches: "${key}" is outside the subset (name the target inside the patch)`);
    const docs =
      typeof patch['path'] === 'string'
        ? readYamlDocuments(inside(dir, patch['path'], here))
        : typeof patch['patch'] === 'string'
          ? parseYaml(patch['patch'], file)
          : [];
    if (!docs.length) throw here('a patch needs a path or an inline patch');
    for (const doc of docs) {
      if (Array.isArray(doc)) throw here('JSON 6902 patches are outside the subset');
      const p = doc as K8sObject;
      const target = resources.find((r) => r.object.kind === p.kind && (r.generatedFrom ?? r.object.metadata.name) === p.metadata?.name);
      if (!target) throw here(`patch for ${p.kind}/${p.metadata?.name}: no such object in the resources`);
      target.object = strategicMerge(target.object, p) as K8sObject;
    }
  }

  const namespace = k['namespace'];
  if (typeof namespace === 'string') {
    for (const r of resources) if (!CLUSTER_SCOPED.has(r.object.kind)) r.object.metadata.namespace = namespace;
  }

  for (const set of list<JsonObject>(k['labels'])) {
    if (set['includeSelectors']) throw here('labels with includeSelectors: true are outside the subset (selectors are immutable)');
    const pairs = (set['pairs'] ?? {}) as Record<string, string>;
    for (const r of resources) {
      r.object.metadata.labels = { ...r.object.metadata.labels, ...pairs };
      const template = podTemplate(r.object);
      if (set['includeTemplates'] && template) {
        const meta = (template['metadata'] ??= {}) as JsonObject;
        meta['labels'] = { ...((meta['labels'] as JsonObject) ?? {}), ...pairs };
      }
    }
  }

  for (const rep of list<JsonObject>(k['replicas'])) {
    const targets = resources.filter(
      (r) => ['Deployment', 'StatefulSet', 'ReplicaSet'].includes(r.object.kind) && r.object.metadata.name === rep['name'],
    );
    if (!targets.length) throw here(`replicas: no Deployment or StatefulSet named ${String(rep['name'])}`);
    for (const t of targets) (t.object['spec'] as JsonObject)['replicas'] = rep['count'] as number;
  }

  for (const image of list<JsonObject>(k['images'])) {
    for (const r of resources) for (const c of containers(r.object)) c['image'] = retag(String(c['image']), image);
  }
  return resources;
}

function generateConfigMap(dir: string, gen: JsonObject, resources: Resource[], here: (m: string) => Error): void {
  for (const key of Object.keys(gen)) {
    if (!['name', 'behavior', 'literals', 'envs', 'files'].includes(key)) throw here(`configMapGenerator: "${key}" is outside the subset`);
  }
  const name = String(gen['name']);
  const data: Record<string, string> = {};
  const put = (key: string, value: string) => {
    if (key in data) throw here(`configMapGenerator ${name}: key ${key} given twice`);
    data[key] = value;
  };
  for (const envFile of list<string>(gen['envs'])) {
    for (const line of readFileSync(inside(dir, envFile, here), 'utf8').split('\n')) {
      if (line.trim() && !line.trim().startsWith('#')) put(...keyValue(line, here));
    }
  }
  for (const literal of list<string>(gen['literals'])) put(...keyValue(literal, here));
  for (const entry of list<string>(gen['files'])) {
    const [key, path] = entry.includes('=') ? entry.split('=', 2) : [entry.split('/').pop()!, entry];
    put(key, readFileSync(inside(dir, path, here), 'utf8'));
  }
  const behavior = (gen['behavior'] as string | undefined) ?? 'create';
  const existing = resources.find((r) => r.generatedFrom === name);
  if (behavior === 'create') {
    if (existing) throw here(`configMapGenerator ${name} exists already (use behavior: merge or replace)`);
    resources.push({ object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }, generatedFrom: name });
  } else if (behavior === 'merge' || behavior === 'replace') {
    if (!existing) throw here(`configMapGenerator ${name} (behavior: ${behavior}): nothing generated by that name below`);
    existing.object['data'] = behavior === 'merge' ? { ...(existing.object['data'] as JsonObject), ...data } : data;
  } else {
    throw here(`configMapGenerator ${name}: behavior ${behavior} is not create, merge or replace`);
  }
}

/** The name suffix Kustomize's hasher gives a generated ConfigMap: sha256 of {data, kind, name} as Go's JSON encoder writes it. */
export function configMapHash(name: string, data: Record<string, string>): string {
  const sorted = Object.fromEntries(
    Object.keys(data)
      .sort()
      .map((k) => [k, data[k]]),
  );
  const json = JSON.stringify({ data: sorted, kind: 'ConfigMap', name }).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  const hex = createHash('sha256').update(json).digest('hex');
  const swap: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };
  return [...hex.slice(0, 10)].map((c) => swap[c] ?? c).join('');
}

function applyHashSuffixes(resources: Resource[]): void {
  const renamed = new Map<string, string>(); // namespace/name → hashed name
  for (const r of resources) {
    if (!r.generatedFrom) continue;
    const hashed = `${r.generatedFrom}-${configMapHash(r.generatedFrom, r.object['data'] as Record<string, string>)}`;
    renamed.set(`${r.object.metadata.namespace ?? ''}/${r.generatedFrom}`, hashed);
    r.object.metadata.name = hashed;
  }
  const rename = (ref: JsonObject | undefined, namespace: string) => {
    const to = ref && renamed.get(`${namespace}/${String(ref['name'])}`);
    if (to) ref['name'] = to;
  };
  for (const r of resources) {
    const spec = podSpec(r.object);
    if (!spec) continue;
    const ns = r.object.metadata.namespace ?? '';
    for (const c of containers(r.object)) {
      for (const e of (c['env'] as JsonObject[] | undefined) ?? [])
        rename((e['valueFrom'] as JsonObject | undefined)?.['configMapKeyRef'] as JsonObject, ns);
      for (const e of (c['envFrom'] as JsonObject[] | undefined) ?? []) rename(e['configMapRef'] as JsonObject, ns);
    }
    for (const v of (spec['volumes'] as JsonObject[] | undefined) ?? []) {
      rename(v['configMap'] as JsonObject, ns);
      for (const s of ((v['projected'] as JsonObject | undefined)?.['sources'] as JsonObject[] | undefined) ?? [])
        rename(s['configMap'] as JsonObject, ns);
    }
  }
}

/** The pod template of a workload, if it has one. */
export function podTemplate(o: K8sObject): JsonObject | undefined {
  const spec = o['spec'] as JsonObject | undefined;
  if (!spec) return undefined;
  if (o.kind === 'CronJob') return ((spec['jobTemplate'] as JsonObject)?.['spec'] as JsonObject)?.['template'] as JsonObject;
  return ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'].includes(o.kind) ? (spec['template'] as JsonObject) : undefined;
}

export function podSpec(o: K8sObject): JsonObject | undefined {
  return o.kind === 'Pod' ? (o['spec'] as JsonObject) : (podTemplate(o)?.['spec'] as JsonObject | undefined);
}

export function containers(o: K8sObject): JsonObject[] {
  const spec = podSpec(o);
  return spec ? [...((spec['initContainers'] as JsonObject[]) ?? []), ...((spec['containers'] as JsonObject[]) ?? [])] : [];
}

function retag(image: string, rule: JsonObject): string {
  const at = image.indexOf('@');
  const withoutDigest = at === -1 ? image : image.slice(0, at);
  const colon = withoutDigest.lastIndexOf(':');
  const hasTag = colon > withoutDigest.lastIndexOf('/');
  const name = hasTag ? withoutDigest.slice(0, colon) : withoutDigest;
  if (name !== rule['name']) return image;
  const tag = rule['digest'] ? `@${String(rule['digest'])}` : rule['newTag'] ? `:${String(rule['newTag'])}` : image.slice(name.length);
  return `${String(rule['newName'] ?? name)}${tag}`;
}

function keyValue(text: string, here: (m: string) => Error): [string, string] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw here(`"${text}" is not KEY=VALUE`);
  let value = text.slice(eq + 1);
  if (/^(['"]).*\1$/.test(value) && value.length >= 2) value = value.slice(1, -1);
  return [text.slice(0, eq).trim(), value];
}

/** Kustomize loads files only from inside the kustomization's own folder. */
function inside(dir: string, path: string, here: (m: string) => Error): string {
  const full = normalize(join(dir, path));
  const rel = relative(dir, full);
  if (isAbsolute(path) || rel.startsWith('..')) throw here(`${path} is outside the kustomization's folder (Kustomize refuses to load it)`);
  if (!existsSync(full)) throw here(`${path} does not exist`);
  return full;
}

function readObjects(path: string): K8sObject[] {
  return readYamlDocuments(path).map((doc, i) => {
    const o = doc as K8sObject;
    if (
      !o ||
      typeof o !== 'object' ||
      typeof o.kind !== 'string' ||
      typeof o.apiVersion !== 'string' ||
      typeof o.metadata?.name !== 'string'
    ) {
      throw new KustomizeError(`${path}: document ${i + 1} is not a Kubernetes object (apiVersion, kind, metadata.name)`);
    }
    return o;
  });
}

function readYamlDocuments(path: string): unknown[] {
  return parseYaml(readFileSync(path, 'utf8'), path);
}

function parseYaml(text: string, where: string): unknown[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length) throw new KustomizeError(`${where}: ${doc.errors[0].message}`);
      return doc.toJS() as unknown;
    })
    .filter((d) => d !== null && d !== undefined);
}

function list<T>(value: unknown): T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new KustomizeError(`expected a list, got ${JSON.stringify(value)}`);
  return value as T[];
}

function group(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
}

function sameId(a: K8sObject, b: K8sObject): boolean {
  return (
    group(a.apiVersion) === group(b.apiVersion) &&
    a.kind === b.kind &&
    a.metadata.name === b.metadata.name &&
    (a.metadata.namespace ?? '') === (b.metadata.namespace ?? '')
  );
}

export function describe(o: K8sObject): string {
  return `${o.kind}/${o.metadata.name}`;
}

function byLegacyOrder(a: K8sObject, b: K8sObject): number {
  const rank = (k: string) => (LAST.includes(k) ? 1000 + LAST.indexOf(k) : LEGACY_ORDER.includes(k) ? LEGACY_ORDER.indexOf(k) : 500);
  return rank(a.kind) - rank(b.kind) || a.kind.localeCompare(b.kind) || a.metadata.name.localeCompare(b.metadata.name);
}

/** Where the overlays live, for the CLI and the specs. */
export const DEPLOY_ROOT = resolve(__dirname, '../../deploy');
export const OVERLAYS_DIR = join(DEPLOY_ROOT, 'kubernetes/overlays');
export const overlayDir = (name: string) => join(OVERLAYS_DIR, name);
