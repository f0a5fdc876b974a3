/**
 * The Grafana dashboard (deploy/grafana/trading-platform.json) may only query metrics the
 * services serve: a renamed metric would otherwise leave a panel silently empty.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const DASHBOARD_FILE = join(__dirname, '../../deploy/grafana/trading-platform.json');

/**
 * What the internal listeners' /metrics serve, by type and labels (deploy/grafana/served-metrics.json;
 * apps/platform's metrics spec checks that list against what every service really serves).
 */
const SERVED_METRICS_FILE = join(__dirname, '../../deploy/grafana/served-metrics.json');
export interface ServedMetric {
  type: 'counter' | 'gauge' | 'histogram';
  labels: string[];
  services: string[];
}
export const SERVED_METRICS = Object.fromEntries(
  Object.entries(JSON.parse(readFileSync(SERVED_METRICS_FILE, 'utf8')) as Record<string, ServedMetric | string>).filter(
    (e): e is [string, ServedMetric] => typeof e[1] !== 'string',
  ),
);

/** Every series name a query may read, with the labels it carries (every series has `service`, and Prometheus adds `instance` and `job`). */
const KNOWN = new Map<string, Set<string>>(
  Object.entries(SERVED_METRICS).flatMap(([name, m]) => {
    const labels = [...m.labels, 'service', 'instance', 'job'];
    return m.type === 'histogram'
      ? [
          [`${name}_bucket`, new Set([...labels, 'le'])],
          [`${name}_sum`, new Set(labels)],
          [`${name}_count`, new Set(labels)],
        ]
      : [[name, new Set(labels)]];
  }),
);

/** The label names an expression matches on or aggregates by. */
export function labelsIn(expr: string): string[] {
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');
  const names = [
    ...[...bare.matchAll(/\{([^}]*)\}/g)].flatMap((m) =>
      [...m[1]!.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!),
    ),
    ...[...bare.matchAll(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)].flatMap((m) =>
      m[1]!.split(',').map((l) => l.trim()),
    ),
  ];
  return [...new Set(names.filter(Boolean))];
}

/** PromQL's own words: functions, aggregations and keywords, never metric names. */
const PROMQL_WORDS = new Set(
  (
    'sum min max avg count stddev stdvar topk bottomk quantile count_values group by without on ignoring group_left group_right bool and or unless offset ' +
    'rate irate increase delta idelta deriv histogram_quantile label_values label_replace label_join abs ceil floor round clamp clamp_min clamp_max ' +
    'absent absent_over_time changes resets time timestamp vector scalar sort sort_desc sum_over_time avg_over_time max_over_time min_over_time ' +
    'count_over_time last_over_time quantile_over_time predict_linear exp ln log2 log10 sqrt inf nan'
  ).split(' '),
);

/** The metric names an expression reads. */
export function metricsIn(expr: string): string[] {
  const bare = expr
    .replace(/\blabel_values\(\s*([^,)]+)(?:,[^)]*)?\)/g, '$1') // a variable's query: the label is no metric
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""') // label values, regexes
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // ranges ($__rate_interval)
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '') // label lists
    .replace(/\$\w+/g, '');
  const words = bare.match(/[A-Za-z_:][A-Za-z0-9_:]*/g) ?? [];
  return [...new Set(words.filter((w) => !PROMQL_WORDS.has(w) && !/^\d/.test(w)))].filter((w) => !/^(e|E)$/.test(w));
}

/** Every query of the dashboard (panel targets, nested rows, template variables) with where it sits. */
export function dashboardQueries(dashboard: unknown): Array<{ where: string; expr: string }> {
  const out: Array<{ where: string; expr: string }> = [];
  const d = dashboard as { panels?: any[]; templating?: { list?: any[] } };
  const visit = (panels: any[] = []) => {
    for (const p of panels) {
      for (const t of p.targets ?? []) if (typeof t.expr === 'string') out.push({ where: `panel "${p.title}"`, expr: t.expr });
      visit(p.panels);
    }
  };
  visit(d.panels);
  for (const v of d.templating?.list ?? []) {
    const q = typeof v.query === 'string' ? v.query : v.query?.query;
    if (v.type === 'query' && typeof q === 'string') out.push({ where: `variable $${v.name}`, expr: q });
  }
  return out;
}

export function dashboardProblems(text = readFileSync(DASHBOARD_FILE, 'utf8')): string[] {
  let dashboard: unknown;
  try {
    dashboard = JSON.parse(text);
  } catch (err) {
    return [`deploy/grafana/trading-platform.json: not JSON (${(err as Error).message})`];
  }
  const queries = dashboardQueries(dashboard);
  if (!queries.length) return ['deploy/grafana/trading-platform.json: no queries'];
  return queries.flatMap(({ where, expr }) => queryProblems(where, expr));
}

/** What is wrong with one PromQL query: no metric, a metric nobody serves, or a label none of its metrics carries. */
export function queryProblems(where: string, expr: string): string[] {
  const problems: string[] = [];
  const metrics = metricsIn(expr);
  if (!metrics.length) problems.push(`${where}: reads no metric (${expr})`);
  for (const m of metrics) if (!KNOWN.has(m)) problems.push(`${where}: ${m} is not a metric the services serve`);
  // A label no metric of the query carries matches nothing, or groups everything into one series.
  const carried = new Set(metrics.flatMap((m) => [...(KNOWN.get(m) ?? [])]));
  if (metrics.every((m) => KNOWN.has(m)))
    for (const label of labelsIn(expr)) if (!carried.has(label)) problems.push(`${where}: no metric of the query has the label ${label}`);
  return problems;
}
