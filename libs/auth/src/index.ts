export * from './claims';
export * from './edge';
export * from './internal-claims';
export * from './ip';
export * from './scopes';
export * from './service-identity';
export * from './sessions';
export * from './identity-config';
