import { readFileSync } from 'node:fs';
import { DASHBOARD_FILE, dashboardProblems, dashboardQueries, labelsIn, metricsIn, SERVED_METRICS } from './dashboard-rules';

const text = readFileSync(DASHBOARD_FILE, 'utf8');

describe('the Grafana dashboard (deploy/grafana/trading-platform.json)', () => {
  it('parses, and every query reads only metrics the services serve', () => {
    expect(dashboardProblems(text)).toEqual([]);
  });

  it('shows every served metric somewhere', () => {
    const read = new Set(dashboardQueries(JSON.parse(text)).flatMap((q) => metricsIn(q.expr)));
    for (const [name, m] of Object.entries(SERVED_METRICS)) expect(read).toContain(m.type === 'histogram' ? `${name}_bucket` : name);
  });

  it('reads the metric names out of PromQL, not functions, labels or variables', () => {
    expect(
      metricsIn(
        'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{service="rest-facade",status=~"5.."}[$__rate_interval])))',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(
      metricsIn('sum by (service) (db_pool_connections{state="total"}) - sum by (service) (db_pool_connections{state="idle"})'),
    ).toEqual(['db_pool_connections']);
    expect(metricsIn('label_values(process_cpu_seconds_total, service)')).toEqual(['process_cpu_seconds_total']);
  });

  it('refuses a panel that reads a metric nobody serves, and a file that is not JSON', () => {
    const dashboard = JSON.parse(text);
    dashboard.panels.find((p: { targets?: unknown[] }) => p.targets).targets[0].expr = 'rate(http_requests_total[5m])';
    expect(dashboardProblems(JSON.stringify(dashboard))).toEqual([
      expect.stringMatching(/: http_requests_total is not a metric the services serve$/),
    ]);
    expect(dashboardProblems('{')[0]).toMatch(/not JSON/);
  });

  it('reads the labels a query matches on or groups by, and refuses one its metrics do not carry', () => {
    expect(labelsIn('sum by (le, route) (rate(x_bucket{service="rest-facade",status=~"5.."}[5m]))').sort()).toEqual(
      ['le', 'route', 'service', 'status'].sort(),
    );
    const dashboard = JSON.parse(text);
    dashboard.panels.find((p: { targets?: unknown[] }) => p.targets).targets[0].expr =
      'sum by (group) (rate(http_request_duration_seconds_count{path="/v1/accounts"}[5m]))';
    expect(dashboardProblems(JSON.stringify(dashboard))).toEqual([
      expect.stringMatching(/: no metric of the query has the label path$/),
      expect.stringMatching(/: no metric of the query has the label group$/),
    ]);
  });
});
