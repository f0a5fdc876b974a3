/**
 * npm run deploy:check — renders every Kubernetes overlay and validates it offline (schemas,
 * references, the platform's rules), and checks docker-compose.yml scales, and the Grafana
 * dashboard and the alerting rules read only served metrics. Exits 1 on any problem. Part of npm test.
 */
import { alertProblems } from './alert-rules';
import { composeProblems } from './compose-rules';
import { dashboardProblems } from './dashboard-rules';
import { checkOverlay, LINKS, linkProblems, overlayNames } from './overlays';

function main(): void {
  let failed = false;
  const section = (title: string, problems: string[], ok: string) => {
    if (problems.length) {
      failed = true;
      console.error(`${title}: ${problems.length} problem(s)\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    } else {
      console.log(`${title}: ${ok}`);
    }
  };
  for (const name of overlayNames()) {
    try {
      const { objects, problems } = checkOverlay(name);
      section(`overlay ${name}`, problems, `${objects.length} objects, valid`);
    } catch (err) {
      section(`overlay ${name}`, [(err as Error).message], '');
    }
  }
  section('links into deploy/', linkProblems(), LINKS.map((l) => `${l.link} -> ${l.target}`).join(', '));
  section('docker-compose.yml', composeProblems(), 'scales (no fixed names, addresses or host ports on scaled services)');
  section('deploy/grafana/trading-platform.json', dashboardProblems(), 'every query reads served metrics');
  section('deploy/prometheus/alerts.yml', alertProblems(), 'every rule reads served metrics and has a severity and a runbook');
  process.exit(failed ? 1 : 0);
}

main();
