export * from './listeners';
export * from './problems';
export * from './server';
export { startPeriodic, type PeriodicTask } from './periodic';
export { Lifecycle } from './lifecycle';
