import { readFileSync } from 'node:fs';
import { COMPOSE_FILE, composeProblems, SCALED_SERVICES } from './compose-rules';

const compose = readFileSync(COMPOSE_FILE, 'utf8');
/** docker-compose.yml with one service's block edited. */
const edit = (from: string, to: string) => {
  expect(compose).toContain(from);
  return compose.replace(from, to);
};

describe('docker-compose.yml scales (docker compose up --scale accounts=2 --scale gateway=2)', () => {
  it('has no fixed container name or address, no fixed host port on a scaled service, Redis behind ACL users', () => {
    expect(composeProblems(compose)).toEqual([]);
    expect(SCALED_SERVICES).toEqual(expect.arrayContaining(['accounts', 'gateway']));
  });

  it('refuses a container_name, a fixed address and a fixed host port on a scaled service', () => {
    const named = edit(
      '  accounts:\n    <<: *app\n',
      '  accounts:\n    <<: *app\n    container_name: accounts\n    networks:\n      default:\n        ipv4_address: 172.20.0.5\n',
    );
    expect(composeProblems(named)).toEqual([
      "services.accounts: container_name fixes the container's name, so it cannot scale",
      'services.accounts: a fixed address on network default',
    ]);
    const fixedPort = edit('"${GATEWAY_HOST_PORTS:-4000-4009}:4000"', '"${GATEWAY_HOST_PORT:-4000}:4000"');
    expect(composeProblems(fixedPort)).toEqual([
      'services.gateway: publishes the fixed host port 4000; a second replica could not bind it (publish a range, or nothing)',
    ]);
  });

  it('refuses a stop grace period that would SIGKILL an app before its own stop deadline', () => {
    const short = edit('  stop_grace_period: 25s', '  stop_grace_period: 15s');
    const problems = composeProblems(short);
    expect(problems).toContain(
      "services.oms: stop_grace_period 15s is under the apps' stop deadline (20 s) + 2 s: SIGKILL would cut a clean stop",
    );
    expect(problems).toHaveLength(6); // every app, none of the data stores
    expect(composeProblems(edit('  stop_grace_period: 25s\n', ''))).toContain(
      "services.auth: stop_grace_period 10s (the default) is under the apps' stop deadline (20 s) + 2 s: SIGKILL would cut a clean stop",
    );
  });

  it('refuses a trusted proxy given by address, a peer reached by address, and Redis without a password', () => {
    const problems = composeProblems(
      edit('FACADE_TRUST_PROXY: ${FACADE_TRUST_PROXY:-}', 'FACADE_TRUST_PROXY: ${FACADE_TRUST_PROXY:-172.20.0.9}')
        .replace('GATEWAY_URL: http://gateway:4100/graphql', 'GATEWAY_URL: http://172.20.0.7:4100/graphql')
        .replace('REDIS_URL: redis://oms:${REDIS_OMS_PASSWORD}@redis:6379', 'REDIS_URL: redis://redis:6379'),
    );
    expect(problems.sort()).toEqual([
      'services.oms: REDIS_URL reaches Redis without a user and password',
      "services.rest-facade: FACADE_TRUST_PROXY names 172.20.0.9; trust a network (CIDR), never one container's address",
      "services.rest-facade: GATEWAY_URL reaches 172.20.0.7 by address; use the service's name",
    ]);
  });
});
