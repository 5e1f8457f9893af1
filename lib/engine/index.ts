/** rayshift's engine: pure, deterministic state machines for RayService upgrades and RBG rollouts. */
export * from './actions';
export * from './affinity-batches';
export * from './cluster-hash';
export * from './cluster-name';
export * from './migration-steps';
export * from './observation';
export * from './plan';
export * from './plan-rayservice';
export * from './plan-rbg';
export * from './rayservice-engine';
export * from './rbg-bound';
export * from './rbg-roles';
export * from './rbg-rollout';
export * from './rbg-upstream';
export * from './rbg-warmup';
export * from './status';
