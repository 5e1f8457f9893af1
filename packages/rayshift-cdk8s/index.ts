/**
 * The entry point of the jsii package `rayshift-cdk8s`: the constructs and their model, the part of
 * rayshift that Python (and every jsii language) uses. scripts/build-python.sh compiles it over
 * lib/spec and lib/cdk8s as they are, next to this file in the package's `src/`.
 */
export * from './lib/spec';
export * from './lib/cdk8s';
