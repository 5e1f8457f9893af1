/**
 * rayshift's executor of coordinated RoleBasedGroup rollouts: the coordination rules it reads, what
 * it observes of each role, the per-coordination step, the status annotation, Events, metrics and
 * the reconciler that ties them to the API server.
 */
export * from './names';
export * from './coordination';
export * from './observe';
export * from './workloads';
export * from './status';
export * from './step';
export * from './events';
export * from './metrics';
export * from './reconciler';
