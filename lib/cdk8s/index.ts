/** cdk8s constructs of rayshift. */
export * from './validated-object';
export * from './raycluster-builder';
export * from './rayservice';
export * from './gateway';
export * from './route';
export * from './rolebasedgroup';
export * from './coordinated-policy';
export * from './rolebasedgroup-warmup';
export * from './affinity-batches';
export * from './rbg-router';
