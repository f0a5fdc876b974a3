/** The overlays under deploy/kubernetes/overlays, rendered and validated; and the files they copy from tools/service-mode. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEPLOY_ROOT, OVERLAYS_DIR, overlayDir, renderKustomization, type K8sObject } from './kustomize';
import { externalSecrets, validateObjects } from './validate';

export function overlayNames(): string[] {
  return readdirSync(OVERLAYS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

export function checkOverlay(name: string): { objects: K8sObject[]; problems: string[] } {
  const objects = renderKustomization(overlayDir(name));
  return { objects, problems: validateObjects(objects, externalSecrets(name)) };
}

/**
 * Kustomize loads no file from outside a kustomization's folder, so the in-cluster Redis carries a
 * copy of the one place its rules are written; the copy must not drift. (The in-cluster PostgreSQL
 * declares its databases as Database objects; overlays.spec.ts holds them to the same list.)
 */
const COPIES: Array<{ copy: string; original: string }> = [
  { copy: 'deploy/kubernetes/in-cluster/redis/redis-users.sh', original: 'tools/service-mode/redis-users.sh' },
];

export function copyProblems(): string[] {
  const root = join(DEPLOY_ROOT, '..');
  return COPIES.filter(({ copy, original }) => readFileSync(join(root, copy), 'utf8') !== readFileSync(join(root, original), 'utf8')).map(
    ({ copy, original }) => `${copy} differs from ${original}: copy it again (cp ${original} ${copy})`,
  );
}
