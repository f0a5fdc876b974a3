export { OutboxRelay, outboxMetrics } from './outbox-relay';
