/**
 * Kubernetes strategic merge patch, the part our overlays use: maps merge key by key, a `null`
 * value deletes the key, lists of named things (containers, env, ports, volumes, …) merge item by
 * item on their merge key as the API server's schema says, and every other list is replaced whole
 * (as Kustomize does for lists without a merge key: NetworkPolicy rules, Ingress rules, args).
 * Directives (`$patch`, `$retainKeys`, `$deleteFromPrimitiveList`) are refused rather than guessed at.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Field name → merge key, for the lists of objects Kubernetes merges item by item (from the API's patchMergeKey). */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
};

/** A container's ports merge on containerPort, a Service's on port; other `ports` lists (NetworkPolicy rules) are replaced. */
const PORTS_KEY: Record<string, string> = { containers: 'containerPort', initContainers: 'containerPort', spec: 'port' };

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export function strategicMerge(base: Json, patch: Json, path = '', parentKey = ''): Json {
  if (!isObject(patch)) return clone(patch);
  if (!isObject(base)) base = {};
  const out: JsonObject = { ...(base as JsonObject) };
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) throw new Error(`${path || '/'}: the patch directive ${key} is outside the supported subset`);
    if (value === null) {
      delete out[key];
    } else if (Array.isArray(value)) {
      out[key] = mergeList(out[key], value, `${path}/${key}`, key, parentKey);
    } else if (isObject(value)) {
      out[key] = strategicMerge(out[key] ?? {}, value, `${path}/${key}`, key);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function mergeList(base: Json | undefined, patch: Json[], path: string, key: string, parentKey: string): Json[] {
  const mergeKey = key === 'ports' ? PORTS_KEY[parentKey] : MERGE_KEYS[key];
  if (!mergeKey || !Array.isArray(base)) return patch.map(clone);
  const merged = base.map(clone);
  for (const item of patch) {
    if (!isObject(item) || item[mergeKey] === undefined)
      throw new Error(`${path}: every item of a patched ${key} list needs its ${mergeKey}`);
    const at = merged.findIndex((b) => isObject(b) && b[mergeKey] === item[mergeKey]);
    if (at === -1) merged.push(clone(item));
    else merged[at] = strategicMerge(merged[at], item, `${path}/${String(item[mergeKey])}`, key);
  }
  return merged;
}

function clone<T extends Json>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}
