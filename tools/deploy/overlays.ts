/** The overlays under deploy/kubernetes/overlays, rendered and validated; and the links tools/service-mode makes into them. */
import { existsSync, lstatSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
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
 * Kustomize loads no file from outside a kustomization's folder (a link out of it included), so
 * the in-cluster Redis's rules live in its folder, and tools/service-mode links to them: one file
 * that docker-compose.yml mounts into its redis container, the service-mode smoke test and the
 * scale-out proof run, and the dev overlay ships as a ConfigMap. The link must not become a copy
 * that drifts. (The in-cluster PostgreSQL declares its databases as Database objects;
 * overlays.spec.ts holds them to the same list.)
 */
export const LINKS: Array<{ link: string; target: string }> = [
  { link: 'tools/service-mode/redis-users.sh', target: 'deploy/kubernetes/in-cluster/redis/redis-users.sh' },
];

/** Each link of `links` (paths under `root`) that is not a symbolic link to its target. */
export function linkProblems(links = LINKS, root = join(DEPLOY_ROOT, '..')): string[] {
  const linked = (link: string, target: string) =>
    existsSync(link) && existsSync(target) && lstatSync(link).isSymbolicLink() && realpathSync(link) === realpathSync(target);
  return links
    .filter(({ link, target }) => !linked(join(root, link), join(root, target)))
    .map(({ link, target }) => `${link} must be a symbolic link to ${target}: ln -sf ${relative(dirname(link), target)} ${link}`);
}
