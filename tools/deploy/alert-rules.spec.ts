import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ALERTS_FILE, alertProblems } from './alert-rules';

const text = readFileSync(ALERTS_FILE, 'utf8');

describe('the alerting rules (deploy/prometheus/alerts.yml)', () => {
  it('read only served metrics and labels, say how urgent they are and point to a runbook section that exists', () => {
    expect(alertProblems(text)).toEqual([]);
  });

  it('are rules Prometheus itself accepts (promtool check rules: PromQL syntax, durations, templates)', () => {
    const res = spawnSync('promtool', ['check', 'rules', ALERTS_FILE], { encoding: 'utf8' });
    if (res.error) throw new Error(`promtool not found (${res.error.message}): apt-get install --no-install-recommends prometheus`);
    const rules = (parse(text) as { groups: Array<{ rules: unknown[] }> }).groups.flatMap((g) => g.rules).length;
    expect([res.status, res.stdout + res.stderr]).toEqual([0, expect.stringContaining(`SUCCESS: ${rules} rules found`)]);
  });

  it('refuses an unknown metric or label, a missing severity and a runbook section that does not exist', () => {
    const broken = text
      .replace('max(oms_outbox_backlog) > 200', 'max(oms_outbox_rows) > 200')
      .replace('max by (group) (settlement_consumer_lag) > 500', 'max by (consumer) (settlement_consumer_lag) > 500')
      .replace(/(- alert: EventLoopLag[\s\S]*?)labels: \{ severity: ticket \}/, '$1labels: { team: platform }')
      .replace('runbook: deploy/README.md#slowrestapi', 'runbook: deploy/README.md#slow-api');
    expect(alertProblems(broken)).toEqual([
      'alert SettlementConsumerBehind: no metric of the query has the label consumer',
      'alert OutboxBacklog: oms_outbox_rows is not a metric the services serve',
      'alert SlowRestApi: deploy/README.md has no section #slow-api',
      'alert EventLoopLag: severity must be one of page, ticket',
    ]);
  });
});
