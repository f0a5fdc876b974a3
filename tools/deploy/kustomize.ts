/**
 * Renders a kustomization with the real Kustomize (`kubectl kustomize`, v5), as
 * `kubectl apply -k` would, and parses what it prints. Before rendering, the kustomization files
 * are read for what this repository forbids on purpose (each refused with the reason), so an
 * overlay cannot slip in a selector rewrite or a secret.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface K8sObject extends JsonObject {
  apiVersion: string;
  kind: string;
  metadata: JsonObject & { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}

/** Kustomize features the overlays must not use, and why. */
const FORBIDDEN: Record<string, string> = {
  commonLabels: 'it rewrites selectors, which a Deployment cannot change after creation; use labels with includeSelectors: false',
  secretGenerator: 'no secret value belongs in this repository; Secrets are created out of band (deploy/README.md)',
  patchesStrategicMerge: 'deprecated; use patches with a path',
  patchesJson6902: 'deprecated; use patches',
};

class KustomizeError extends Error {
  override name = 'KustomizeError';
}

/** The objects `kubectl apply -k dir` would send, in Kustomize's output order. */
export function renderKustomization(dir: string): K8sObject[] {
  checkKustomizations(resolve(dir), new Set());
  let out: string;
  try {
    out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  } catch (err) {
    const { code, stderr } = err as { code?: string; stderr?: string };
    if (code === 'ENOENT')
      throw new KustomizeError('kubectl is not installed: `kubectl kustomize` renders the overlays (kubectl 1.27 or later)');
    throw new KustomizeError(`kubectl kustomize ${dir}: ${String(stderr ?? (err as Error).message).trim()}`);
  }
  return parseAllDocuments(out)
    .map((doc, i) => {
      if (doc.errors.length) throw new KustomizeError(`kubectl kustomize ${dir}: document ${i + 1}: ${doc.errors[0]!.message}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => !!o);
}

/** Walks the kustomization and every folder it includes (resources and components), refusing what FORBIDDEN names. */
function checkKustomizations(dir: string, seen: Set<string>): void {
  if (seen.has(dir)) return;
  seen.add(dir);
  const file = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'].map((f) => join(dir, f)).find((f) => existsSync(f));
  if (!file) return; // kubectl says what is missing
  const k = (parseAllDocuments(readFileSync(file, 'utf8'))[0]?.toJS() ?? {}) as JsonObject;
  for (const key of Object.keys(k)) if (FORBIDDEN[key]) throw new KustomizeError(`${file}: "${key}" is not used here: ${FORBIDDEN[key]}`);
  for (const set of (k['labels'] as JsonObject[] | undefined) ?? [])
    if (set['includeSelectors']) throw new KustomizeError(`${file}: labels with includeSelectors: true (selectors are immutable)`);
  for (const entry of [...((k['resources'] as string[] | undefined) ?? []), ...((k['components'] as string[] | undefined) ?? [])]) {
    const path = resolve(dir, entry);
    if (existsSync(path) && statSync(path).isDirectory()) checkKustomizations(path, seen);
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

export function describe(o: K8sObject): string {
  return `${o.kind}/${o.metadata.name}`;
}

/** Where the overlays live, for the CLI and the specs. */
export const DEPLOY_ROOT = resolve(__dirname, '../../deploy');
export const OVERLAYS_DIR = join(DEPLOY_ROOT, 'kubernetes/overlays');
export const overlayDir = (name: string) => join(OVERLAYS_DIR, name);
