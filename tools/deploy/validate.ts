/**
 * Validates a rendered overlay: every object against its schema (schemas.ts), then the policy
 * (policy.ts, a table of named rules applied by engine.ts) — what a schema cannot see, references
 * between objects, and the platform's own rules for its workloads and its in-cluster PostgreSQL.
 *
 * kubectl renders the overlays (`kubectl kustomize`, kustomize.ts) but cannot check their schemas
 * here: `kubectl apply|create --dry-run=client --validate=strict` downloads the OpenAPI schemas
 * from the API server (/openapi/v2), and with --validate=false it still asks the server's
 * discovery API how to map each kind, so without a cluster both fail before looking at an object.
 * schemas.ts checks the same schemas offline instead.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { applyRules, findingText, type Finding } from './engine';
import { DEPLOY_ROOT, describe, type K8sObject } from './kustomize';
import { Overlay, type ExternalSecret, type IngressController } from './overlay-model';
import { POLICY } from './policy';
import { schemaProblems } from './schemas';

export { matches, type ExternalSecret, type IngressController } from './overlay-model';

/** The Secrets created out of band (deploy/kubernetes/external-secrets.yaml), for one overlay or all. */
export function externalSecrets(overlay?: string): ExternalSecret[] {
  const doc = parse(readFileSync(join(DEPLOY_ROOT, 'kubernetes/external-secrets.yaml'), 'utf8')) as { secrets: ExternalSecret[] };
  return doc.secrets.filter((s) => !overlay || s.overlays.includes(overlay));
}

/** The ingress controllers installed outside the manifests (deploy/kubernetes/ingress-controllers.yaml). */
export function ingressControllers(): IngressController[] {
  const doc = parse(readFileSync(join(DEPLOY_ROOT, 'kubernetes/ingress-controllers.yaml'), 'utf8')) as {
    controllers: IngressController[];
  };
  return doc.controllers;
}

/** What the policy finds in well-formed `objects`, each finding with its rule's name. */
export function policyFindings(
  objects: K8sObject[],
  secrets: ExternalSecret[],
  controllers: IngressController[] = ingressControllers(),
): Finding[] {
  return applyRules(POLICY, new Overlay(objects, secrets, controllers));
}

/** Every problem of the rendered `objects`, each prefixed with the object it is in; none when the overlay is sound. */
export function validateObjects(
  objects: K8sObject[],
  secrets: ExternalSecret[],
  controllers: IngressController[] = ingressControllers(),
): string[] {
  const malformed = objects.flatMap((o) => schemaProblems(o).map((p) => `${describe(o)}: ${p}`));
  if (malformed.length) return malformed; // references are only worth following in well-formed objects
  return policyFindings(objects, secrets, controllers).map(findingText);
}
