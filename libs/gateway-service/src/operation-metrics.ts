import type { ApolloServerPlugin } from '@apollo/server';
import { Histogram, type Registry } from 'prom-client';

/** Distinct operation names kept as labels; later newcomers count as `other` (clients choose names). */
const MAX_NAMED_OPERATIONS = 200;
const OPERATION_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * Latency per GraphQL operation at the gateway (the facade's operations are named after its
 * routes), by outcome: `ok`, `error` (the response carries errors) or `refused` (parse,
 * validation or limits: never planned).
 */
export function operationMetrics(registry: Registry): ApolloServerPlugin {
  const duration = new Histogram({
    name: 'graphql_operation_duration_seconds',
    help: 'GraphQL operation duration at the gateway by operation name and outcome',
    labelNames: ['operation', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const named = new Set<string>();
  const label = (name: string | null | undefined) => {
    if (!name || !OPERATION_NAME.test(name)) return 'anonymous';
    if (named.has(name)) return name;
    if (named.size >= MAX_NAMED_OPERATIONS) return 'other';
    named.add(name);
    return name;
  };
  return {
    async requestDidStart() {
      const stop = duration.startTimer();
      let planned = false;
      return {
        async executionDidStart() {
          planned = true;
        },
        async willSendResponse({ request, operationName, response }) {
          const errors = response.body.kind === 'single' && !!response.body.singleResult.errors?.length;
          stop({ operation: label(operationName ?? request.operationName), status: !planned ? 'refused' : errors ? 'error' : 'ok' });
        },
      };
    },
  };
}
