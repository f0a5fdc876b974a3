export * from './claims';
export * from './edge';
export * from './internal-claims';
export * from './ip';
export * from './scopes';
export * from './sessions';
