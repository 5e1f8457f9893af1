/** Route weights: narrow JSON patches of HTTPRoute/GRPCRoute weights, route readiness, and the operator's fresh route. */
export * from './types';
export * from './plan';
export * from './build';
export * from './readiness';
export * from './writer';
