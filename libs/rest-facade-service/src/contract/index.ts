export * from './kit';
export * from './requests';
export * from './resources';
export * from './oauth';
export * from './market';
