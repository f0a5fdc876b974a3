/**
 * Applies a table of named rules (policy.ts) to a rendered overlay. A rule selects objects by
 * kind (and optionally, with `each`, parts of each: its containers, env vars, ports, …) or items
 * of the overlay as a whole, requires something of each, and says what is wrong when it does not
 * hold. Findings come in the objects' order, each object's in the table's order; then the rules
 * over the whole overlay, in the table's order.
 */
import { describe, type K8sObject } from './kustomize';
import type { Overlay } from './overlay-model';

/**
 * Objects of these kinds: a kind ("Deployment") or an apiVersion and kind ("postgresql.cnpg.io/v1/Cluster").
 * Without `each` the rule looks at the object itself; with it, at each part `each` picks from it.
 */
interface ObjectSelection<T> {
  kinds: string[];
  each?: (o: K8sObject, v: Overlay) => T[];
}

/** Items of the overlay as a whole; `subject` is the object a finding names, if any. */
interface OverlaySelection<T> {
  overlay: (v: Overlay) => T[];
  subject?: (item: T) => K8sObject;
}

export interface Rule<T = unknown> {
  /** Its name: findings carry it, and the spec breaks each rule by it. */
  name: string;
  select: ObjectSelection<T> | OverlaySelection<T>;
  /** What it requires of each selected item. */
  require: (item: T, v: Overlay) => boolean;
  /** What is wrong when it does not hold; an object's finding is reported after "Kind/name: ". */
  message: string | ((item: T, v: Overlay) => string);
}

export interface Finding {
  rule: string;
  subject?: K8sObject;
  message: string;
}

/** A rule with its item type inferred from its selection (the object itself without `each`), for a table of rules of many item types. */
export const rule = <T = K8sObject>(r: Rule<T>): Rule => r as unknown as Rule;

const selectsKind = (kinds: string[], o: K8sObject) => kinds.includes(o.kind) || kinds.includes(`${o.apiVersion}/${o.kind}`);

function findings<T>(r: Rule<T>, items: T[], v: Overlay, subject: (item: T) => K8sObject | undefined): Finding[] {
  return items
    .filter((item) => !r.require(item, v))
    .map((item) => ({ rule: r.name, subject: subject(item), message: typeof r.message === 'string' ? r.message : r.message(item, v) }));
}

/** Every finding of `rules` in the overlay. */
export function applyRules(rules: Rule[], v: Overlay): Finding[] {
  const perObject = v.objects.flatMap((o) =>
    rules.flatMap((r) => {
      if (!('kinds' in r.select) || !selectsKind(r.select.kinds, o)) return [];
      return findings(r, r.select.each ? r.select.each(o, v) : [o], v, () => o);
    }),
  );
  const overall = rules.flatMap((r) =>
    'overlay' in r.select ? findings(r, r.select.overlay(v), v, r.select.subject ?? (() => undefined)) : [],
  );
  return [...perObject, ...overall];
}

/** A finding as the CLI prints it: "Kind/name: message", or the message alone. */
export const findingText = (f: Finding) => (f.subject ? `${describe(f.subject)}: ${f.message}` : f.message);
