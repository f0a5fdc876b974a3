/**
 * The Prometheus alerting rules (deploy/prometheus/alerts.yml): each reads only metrics and labels
 * the services serve (as the dashboard must), says how urgent it is, and points to a runbook that
 * exists: an alert that fires at night must say what it means and what to do.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { queryProblems } from './dashboard-rules';

export const ALERTS_FILE = join(__dirname, '../../deploy/prometheus/alerts.yml');
const RUNBOOK_FILE = join(__dirname, '../../deploy/README.md');
const SEVERITIES = ['page', 'ticket'];

interface Rule {
  alert?: string;
  expr?: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The anchors GitHub gives deploy/README.md's headings (lower case, spaces to dashes, punctuation dropped). */
function runbookAnchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    ),
  );
}

export function alertProblems(text = readFileSync(ALERTS_FILE, 'utf8'), runbook = readFileSync(RUNBOOK_FILE, 'utf8')): string[] {
  let doc: { groups?: Array<{ name?: string; rules?: Rule[] }> };
  try {
    doc = parse(text) as typeof doc;
  } catch (err) {
    return [`deploy/prometheus/alerts.yml: not YAML (${(err as Error).message})`];
  }
  const anchors = runbookAnchors(runbook);
  const problems: string[] = [];
  const names = new Set<string>();
  const rules = (doc?.groups ?? []).flatMap((g) => g.rules ?? []);
  if (!rules.length) return ['deploy/prometheus/alerts.yml: no rules'];
  for (const rule of rules) problems.push(...ruleProblems(rule, names, anchors));
  return problems;
}

/** One rule's problems; `names` gathers the names seen so far, so a second use is caught. */
function ruleProblems(rule: Rule, names: Set<string>, anchors: Set<string>): string[] {
  const problems: string[] = [];
  const where = `alert ${rule.alert ?? '(unnamed)'}`;
  if (!rule.alert || !/^[A-Z][A-Za-z0-9]+$/.test(rule.alert)) problems.push(`${where}: needs a name in UpperCamelCase`);
  else if (names.has(rule.alert)) problems.push(`${where}: named twice`);
  else names.add(rule.alert);
  if (!rule.expr) problems.push(`${where}: no expr`);
  else problems.push(...queryProblems(where, rule.expr));
  if (rule.for !== undefined && !/^\d+[smh]$/.test(rule.for)) problems.push(`${where}: for ${rule.for} is not a duration like 5m`);
  if (!SEVERITIES.includes(rule.labels?.['severity'] ?? '')) problems.push(`${where}: severity must be one of ${SEVERITIES.join(', ')}`);
  if (!rule.annotations?.['summary']) problems.push(`${where}: no summary`);
  problems.push(...runbookProblems(where, rule, anchors));
  return problems;
}

/** The runbook link must name a section of deploy/README.md that exists. */
function runbookProblems(where: string, rule: Rule, anchors: Set<string>): string[] {
  const link = rule.annotations?.['runbook'] ?? '';
  const anchor = /^deploy\/README\.md#([\w-]+)$/.exec(link)?.[1];
  if (!anchor) return [`${where}: runbook must be deploy/README.md#<section>`];
  if (!anchors.has(anchor)) return [`${where}: deploy/README.md has no section #${anchor}`];
  return [];
}
