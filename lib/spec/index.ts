/** The rayshift model: types, defaults and validation shared by every construct, component, executor and the CLI. */
export * from './problem';
export * from './names';
export * from './percent';
export * from './import-path';
export * from './serve-config';
export * from './raycluster';
export * from './ray-auth';
export * from './initializing-timeout';
export * from './rayservice';
export * from './analysis';
export * from './analysis-templates';
export * from './rbg';
export * from './rbg-warmup';
export * from './rbg-router';
export * from './rbg-executor';
export * from './gateway';
